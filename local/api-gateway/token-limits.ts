/**
 * The stage's per-client limits, as its web ACL enforces them before API Gateway sees a request
 * (`infra/token-limits.ts`): per bearer token and group of routes, the requests of the trailing
 * minute, the refused ones included, as AWS WAF counts them. AWS WAF checks the rate "frequently"
 * and applies it "near the limit" (AWS WAF Developer Guide, "Rate-based rule high-level
 * settings"), so a deployed stage may let a few more through, a few seconds later; this stand-in
 * refuses the first request over the limit.
 */
import { type TokenLimit, tokenLimitWindowSeconds } from '../../infra/throttling.ts';

/** Counts a request; false when its client is over its limit for the request's group. */
export type TokenLimiter = (path: string, authorization: string | undefined) => boolean;

export function createTokenLimiter(
  limits: readonly TokenLimit[],
  now: () => number = Date.now,
): TokenLimiter {
  const windowMilliseconds = tokenLimitWindowSeconds * 1000;
  /** Each aggregation instance's request times, oldest first. */
  const counts = new Map<string, number[]>();
  let prunedAt = now();

  /** Forgets the tokens not seen for a window, now and then. */
  const prune = (time: number) => {
    if (time - prunedAt < windowMilliseconds) return;
    prunedAt = time;
    for (const [key, times] of counts) {
      if ((times.at(-1) ?? 0) <= time - windowMilliseconds) counts.delete(key);
    }
  };

  return (path, authorization) => {
    const limit = limits.find((candidate) => decoded(path).includes(candidate.pathContains));
    // A request without the aggregation key is not counted by the rule (nor rate limited).
    if (limit === undefined || authorization === undefined) return true;
    const time = now();
    prune(time);
    const key = `${limit.group}\n${authorization}`;
    const times = counts.get(key) ?? [];
    while ((times[0] ?? time) <= time - windowMilliseconds) times.shift();
    times.push(time);
    counts.set(key, times);
    return times.length <= limit.requestsPerWindow;
  };
}

/** The path with its percent-escapes decoded, as the rules' URL_DECODE transformation reads it. */
function decoded(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
