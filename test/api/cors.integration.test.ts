/**
 * CORS through the local API as a browser meets it (the real browser suite is the proof that a
 * browser agrees): preflights answered by the gateway without a token, every answer to an
 * allowed origin readable (the functions' and the gateway's own), nothing for another origin.
 *
 * @services dynamodb-local
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { routes } from '../../functions/shared/http/routes.ts';
import { createLogger } from '../../functions/shared/platform/logger.ts';
import { type LocalApi, startLocalApi } from '../../local/local-api.ts';
import { testStoreUrl } from '../support/test-store.ts';

let keysDirectory: string;
let api: LocalApi;
let closed: LocalApi;
const allowed = 'http://localhost:5173';
const other = 'https://evil.example';

beforeAll(async () => {
  keysDirectory = await mkdtemp(join(tmpdir(), 'plant-store-cors-keys-'));
  const common = {
    port: 0,
    dynamoDbUrl: testStoreUrl(),
    keysDirectory,
    logger: createLogger({}, () => {}),
  };
  api = await startLocalApi({
    ...common,
    tableName: `plants-cors-${process.pid}-${Date.now()}`,
    // What `npm start` allows by default.
    allowedOrigins: ['http://localhost:*', 'http://127.0.0.1:*'],
    throttlingStage: 'off',
    gateway: { throttling: { rateLimit: 1, burstLimit: 60 } },
  });
  closed = await startLocalApi({ ...common, tableName: `plants-cors-none-${process.pid}` });
});

afterAll(async () => {
  await api?.stop();
  await closed?.stop();
  await rm(keysDirectory, { recursive: true, force: true });
});

const exposed =
  'ETag, Idempotent-Replayed, Link, Retry-After, traceresponse, WWW-Authenticate, x-amzn-RequestId';

function send(path: string, init: RequestInit & { origin?: string } = {}, base = api) {
  const headers = new Headers(init.headers);
  if (init.origin !== undefined) headers.set('Origin', init.origin);
  return fetch(`${base.url}${path}`, { ...init, headers });
}

function corsOf(response: Response) {
  return {
    allowOrigin: response.headers.get('access-control-allow-origin'),
    exposeHeaders: response.headers.get('access-control-expose-headers'),
    vary: response.headers.get('vary'),
  };
}

describe('preflights', () => {
  it.each([...new Set(routes.map((route) => route.path))])(
    'answers OPTIONS %s without a token: its methods, the request headers, a max age',
    async (path) => {
      const response = await send(path.replace('{id}', '42'), {
        method: 'OPTIONS',
        origin: allowed,
        headers: {
          'Access-Control-Request-Method': 'PATCH',
          'Access-Control-Request-Headers': 'authorization, if-match, content-type',
        },
      });
      expect(response.status).toBe(204);
      const methods = routes.filter((route) => route.path === path).map((route) => route.method);
      expect(Object.fromEntries(response.headers)).toMatchObject({
        'access-control-allow-origin': allowed,
        'access-control-allow-methods': [...methods, 'OPTIONS'].join(', '),
        'access-control-allow-headers':
          'Authorization, Content-Type, Idempotency-Key, If-Match, If-None-Match, traceparent, tracestate',
        'access-control-max-age': '7200',
        vary: 'Origin',
      });
    },
  );

  it('leaves Access-Control-Allow-Origin out for an origin not allowed', async () => {
    for (const origin of [other, 'http://localhost.evil.example:80', 'null']) {
      const response = await send('/plants', { method: 'OPTIONS', origin });
      expect([origin, response.status, corsOf(response).allowOrigin]).toEqual([origin, 204, null]);
    }
  });

  it('has no preflight where no origin is allowed: OPTIONS is an unknown method there', async () => {
    const response = await send('/plants', { method: 'OPTIONS', origin: allowed }, closed);
    expect(response.status).toBe(404);
    expect(corsOf(response)).toEqual({ allowOrigin: null, exposeHeaders: null, vary: null });
  });
});

describe('answers to another origin', () => {
  it('carry no Access-Control-Allow-Origin from a function, so the browser keeps them from the page', async () => {
    const response = await send('/plants', {
      headers: { Authorization: `Bearer ${api.signToken()}` },
      origin: other,
    });
    expect(response.status).toBe(200);
    expect(corsOf(response)).toEqual({ allowOrigin: null, exposeHeaders: null, vary: 'Origin' });
  });
});

describe('answers to an allowed origin', () => {
  it('carry the CORS headers on the functions’ answers, successes and failures alike', async () => {
    const headers = {
      Authorization: `Bearer ${api.signToken()}`,
      'Content-Type': 'application/json',
    };
    const answers = [
      await send('/plants', {
        method: 'POST',
        headers,
        body: '{"id":1,"name":"Fern"}',
        origin: allowed,
      }),
      await send('/plants/1', { headers, origin: 'http://127.0.0.1:8080' }),
      await send('/plants?limit=0', { headers, origin: allowed }),
      await send('/plants/2', { headers, origin: allowed }),
      await send('/plants/1', {
        method: 'PUT',
        headers: { ...headers, 'If-Match': '"1"' },
        body: '{"name":"Moss"}',
        origin: allowed,
      }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 400, 404, 412]);
    for (const answer of answers) {
      expect(corsOf(answer)).toEqual({
        allowOrigin:
          answer.url.includes('/plants/1') && answer.status === 200
            ? 'http://127.0.0.1:8080'
            : allowed,
        exposeHeaders: exposed,
        vary: 'Origin',
      });
    }
  });

  it('carry them on the gateway’s own answers too (401, 403, 404, 429), so a page can read every error', async () => {
    const readOnly = `Bearer ${api.signToken({ scope: 'plants/read' })}`;
    const answers = {
      unauthorized: await send('/plants', { origin: allowed }),
      forbidden: await send('/plants/1', {
        method: 'DELETE',
        headers: { Authorization: readOnly },
        origin: allowed,
      }),
      unknown: await send('/nothing', { origin: allowed }),
    };
    expect(Object.values(answers).map((answer) => answer.status)).toEqual([401, 403, 404]);
    for (const answer of Object.values(answers)) {
      expect(corsOf(answer)).toEqual({
        allowOrigin: allowed,
        exposeHeaders: exposed,
        vary: 'Origin',
      });
    }
    // Throttled: the burst of 60 spent at once (by requests the authorizer let through: the
    // method's bucket comes after it and the client's limit, as in the stage).
    const burst = await Promise.all(
      Array.from({ length: 80 }, () =>
        send('/plants', { headers: { Authorization: readOnly }, origin: allowed }),
      ),
    );
    const throttled = burst.find((answer) => answer.status === 429);
    expect(throttled?.headers.get('retry-after')).toBe('1');
    expect(corsOf(throttled as Response).allowOrigin).toBe(allowed);
  });
});
