/**
 * The stand-in for the web ACL's per-client rules: requests of the trailing minute per bearer
 * token and group of routes, the refused ones counted too, as AWS WAF counts a rate-based rule's.
 */
import { expect, it } from '@jest/globals';
import type { TokenLimit } from '../../infra/throttling.ts';
import { createTokenLimiter } from '../../local/api-gateway/token-limits.ts';

const limits: TokenLimit[] = [
  { group: 'plants', pathContains: '/plants', requestsPerWindow: 3 },
  { group: 'webhookEndpoints', pathContains: '/webhook-endpoints', requestsPerWindow: 2 },
];

function limiterAt() {
  let time = 1_000_000;
  const limiter = createTokenLimiter(limits, () => time);
  return {
    limiter,
    advance: (milliseconds: number) => {
      time += milliseconds;
    },
  };
}

it('refuses a token past its limit in the trailing minute, per group, and no other token', () => {
  const { limiter } = limiterAt();
  const a = 'Bearer a';
  expect([1, 2, 3, 4].map(() => limiter('/plants', a))).toEqual([true, true, true, false]);
  expect(limiter('/plants/7', 'Bearer b')).toBe(true);
  // As the rule's URL_DECODE reads it: an escaped path is the same path.
  expect(limiter('/%70lants', a)).toBe(false);
  expect([1, 2, 3].map(() => limiter('/webhook-endpoints/1/test', a))).toEqual([true, true, false]);
});

it('counts refused requests too: a client that keeps looping stays refused until it pauses', () => {
  const { limiter, advance } = limiterAt();
  const a = 'Bearer a';
  for (let request = 0; request < 3; request += 1) limiter('/plants', a);
  // One request a second, each refused and counted: the trailing minute stays over the limit.
  for (let second = 0; second < 120; second += 1) {
    advance(1_000);
    expect(limiter('/plants', a)).toBe(false);
  }
  advance(60_000);
  expect(limiter('/plants', a)).toBe(true);
});

it('leaves requests outside the rules, and those without the aggregation key, uncounted', () => {
  const { limiter } = limiterAt();
  for (let request = 0; request < 10; request += 1) {
    expect(limiter('/docs', 'Bearer a')).toBe(true);
    expect(limiter('/plants', undefined)).toBe(true);
  }
});
