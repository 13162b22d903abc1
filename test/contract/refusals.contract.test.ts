/**
 * Every refusal in the one documented shape, `{"error": <code>, "message": …}`, on whichever
 * target the suite runs against: no token or a bad one (401, with `WWW-Authenticate`), a token
 * without the scope (403), bodies that are not JSON, not plants, too large or of the wrong type
 * (400 with their codes), a bad path parameter, and a path the API does not have. None of them
 * stores anything, so they run against a production-like stage too.
 */
import { beforeAll, describe, expect } from '@jest/globals';
import { expectError } from './answers.ts';
import { caseNeeding } from './cases.ts';
import { call, plantTokens, target, tokenFor } from './target.ts';

let writer: string;
let reader: string;

beforeAll(async () => {
  ({ writer, reader } = await plantTokens());
}, 180_000);

const post = (body: string | Uint8Array, contentType = 'application/json') =>
  call('POST', '/plants', { token: writer, headers: { 'Content-Type': contentType }, body });

describe('a request without a usable token', () => {
  caseNeeding('gateway-responses')(
    'answers 401/40100 with WWW-Authenticate: Bearer, no token or a forged one',
    async () => {
      for (const authorization of [undefined, 'Bearer not-a-token', `Bearer ${writer}x`]) {
        const answer = await call('GET', '/plants', {
          ...(authorization === undefined ? {} : { headers: { Authorization: authorization } }),
        });
        await expectError(answer, 'listPlants', 401, 40100);
        expect(answer.headers['www-authenticate']).toMatch(/^Bearer\b/);
      }
    },
  );

  caseNeeding('gateway-responses')(
    'answers 403/40300 to a token without the operation’s scope',
    async () => {
      await expectError(
        await call('POST', '/plants', {
          token: reader,
          headers: { 'Content-Type': 'application/json' },
          body: '{"id":1,"name":"Fern"}',
        }),
        'createPlant',
        403,
        40300,
      );
      await expectError(
        await call('POST', '/webhook-endpoints', {
          token: await tokenFor('webhooks/manage'),
          headers: { 'Content-Type': 'application/json' },
          body: '{"url":"https://hooks.example.com/plants"}',
        }),
        'createWebhookEndpoint',
        403,
        40300,
      );
    },
  );
});

describe('a body the API does not take', () => {
  caseNeeding()('answers 400/40001 to a body that is not JSON, or empty', async () => {
    await expectError(await post('{"id":1,'), 'createPlant', 400, 40001);
    await expectError(await post(''), 'createPlant', 400, 40001);
  });

  caseNeeding('binary-bodies')('answers 400/40001 to a body that is not UTF-8', async () => {
    await expectError(await post(new Uint8Array([0x7b, 0xff, 0x7d])), 'createPlant', 400, 40001);
  });

  caseNeeding()('answers 400/40002 naming the field of a body that is not a plant', async () => {
    const answer = await post('{"id":1}');
    await expectError(answer, 'createPlant', 400, 40002);
    expect(answer.text).toContain('name');
    await expectError(await post('{"id":"one","name":"Fern"}'), 'createPlant', 400, 40002);
  });

  caseNeeding()('answers 400/40003 to a content type other than JSON', async () => {
    await expectError(
      await post('{"id":1,"name":"Fern"}', 'text/plain'),
      'createPlant',
      400,
      40003,
    );
  });

  caseNeeding()('answers 400/40004 to a body over 16 KiB', async () => {
    const name = 'x'.repeat(17 * 1024);
    await expectError(await post(`{"id":1,"name":"${name}"}`), 'createPlant', 400, 40004);
  });
});

describe('a path or parameter the API does not take', () => {
  caseNeeding()('answers 400/40005 naming a bad id or limit', async () => {
    const badId = await call('GET', '/plants/not-a-number', { token: reader });
    await expectError(badId, 'getPlant', 400, 40005);
    expect(badId.text).toContain('id');
    const badLimit = await call('GET', '/plants?limit=0', { token: reader });
    await expectError(badLimit, 'listPlants', 400, 40005);
    expect(badLimit.text).toContain('limit');
  });

  caseNeeding('api-gateway-not-found')(
    'answers 404/40400 to a path the API does not have',
    async () => {
      const answer = await call('GET', '/trees', { token: reader });
      expect(answer.status).toBe(404);
      expect(JSON.parse(answer.text)).toEqual({ error: 40400, message: expect.any(String) });
    },
  );
});

describe('a page on another origin (CORS)', () => {
  caseNeeding('cors-preflight')(
    'answers the preflight of an allowed origin with its origin, methods and headers, and no other origin',
    async () => {
      const preflight = (origin: string) =>
        call('OPTIONS', '/plants', {
          headers: {
            Origin: origin,
            'Access-Control-Request-Method': 'POST',
            'Access-Control-Request-Headers': 'authorization,content-type',
          },
        });
      const allowed = target().browserOrigin as string;
      const answer = await preflight(allowed);
      expect(answer.status).toBe(204);
      expect(answer.headers['access-control-allow-origin']).toBe(allowed);
      expect(answer.headers['access-control-allow-methods']?.split(', ')).toEqual(
        expect.arrayContaining(['GET', 'POST']),
      );
      expect(answer.headers['access-control-allow-headers']?.toLowerCase()).toEqual(
        expect.stringContaining('authorization'),
      );
      const stranger = await preflight('https://not-allowed.example');
      expect(stranger.headers['access-control-allow-origin']).toBeUndefined();
    },
  );
});
