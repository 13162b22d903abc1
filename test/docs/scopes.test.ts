/**
 * The docs, the token command's help and the scopes' descriptions say which endpoint routes need
 * `plants/read` as the route table does.
 */
import { readFileSync } from 'node:fs';
import { expect, it } from '@jest/globals';
import { routes, scopeDescriptions, scopes } from '../../functions/shared/http/routes.ts';

const needingRead = routes
  .filter((route) => route.path.startsWith('/webhook-endpoints'))
  .filter((route) => (route.scopes as readonly string[]).includes(scopes.read))
  .map((route) => `${route.method} ${route.path}`)
  .sort();

it('docs/webhooks.md names every endpoint route that needs plants/read, and no other', () => {
  const text = readFileSync(new URL('../../docs/webhooks.md', import.meta.url), 'utf8');
  const sentence = /\(scope `webhooks\/manage`;([^)]*?)need `plants\/read` too/s.exec(text)?.[1];
  const named = [...(sentence ?? '').matchAll(/`(GET|POST|PUT|PATCH|DELETE)\s+([^`]+)`/g)].map(
    (match) => `${match[1]} ${match[2]?.replace(/\s+/g, '')}`,
  );
  expect(named.sort()).toEqual(needingRead);
});

it('the token help and the scope description name the same three: creating, changing, recovering', () => {
  expect(needingRead).toEqual([
    'PATCH /webhook-endpoints/{endpointId}',
    'POST /webhook-endpoints',
    'POST /webhook-endpoints/{endpointId}/recover',
  ]);
  const help = readFileSync(new URL('../../local/token.ts', import.meta.url), 'utf8');
  expect(help).toContain('creating, changing or recovering one needs "plants/read" too');
  expect(scopeDescriptions['webhooks/manage']).toContain(
    'creating, changing or recovering one needs plants/read too',
  );
});
