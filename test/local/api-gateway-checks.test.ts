/**
 * The local API Gateway stand-in's checks before a function runs, in API Gateway's order: the
 * route, throttling, the payload limit, the TOKEN authorizer and its cache; and the token bucket.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { gatewayResponses } from '../../infra/gateway-responses.ts';
import { PortInUseError } from '../../local/api-gateway/gateway.ts';
import { createTokenBucket } from '../../local/api-gateway/throttling.ts';
import {
  echo,
  expectGatewayResponse,
  post,
  rawRequest,
  type Started,
  startWith,
} from './api-gateway-harness.ts';

describe('local API Gateway stand-in', () => {
  let started: Started;

  beforeAll(async () => {
    started = await startWith(echo);
  });

  afterAll(async () => {
    await started?.gateway.close();
  });

  describe('authorizer', () => {
    it('calls the authorizer with a TOKEN event naming the method ARN', async () => {
      const { gateway, authorizerCalls } = await startWith(echo);
      try {
        await post(gateway, 'Bearer allow');
        expect(authorizerCalls).toEqual([
          {
            type: 'TOKEN',
            authorizationToken: 'Bearer allow',
            methodArn: expect.stringMatching(
              /^arn:aws:execute-api:[a-z0-9-]+:\d{12}:[a-z0-9]+\/local\/POST\/plants$/,
            ),
          },
        ]);
      } finally {
        await gateway.close();
      }
    });

    it('reuses a policy for the same token within the cache TTL', async () => {
      const { gateway, authorizerCalls } = await startWith(echo);
      try {
        await post(gateway, 'Bearer allow');
        await post(gateway, 'Bearer allow');
        await post(gateway, 'Bearer deny');
        await post(gateway, 'Bearer deny');
        expect(authorizerCalls.map((call) => call.authorizationToken)).toEqual([
          'Bearer allow',
          'Bearer deny',
        ]);
      } finally {
        await gateway.close();
      }
    });

    it('asks the authorizer every time when the cache is off, and never caches a 401', async () => {
      const { gateway, authorizerCalls } = await startWith(echo, { authorizerCacheTtlSeconds: 0 });
      const cached = await startWith(echo);
      try {
        await post(gateway, 'Bearer allow');
        await post(gateway, 'Bearer allow');
        expect(authorizerCalls).toHaveLength(2);
        await post(cached.gateway, 'Bearer expired');
        await post(cached.gateway, 'Bearer expired');
        expect(cached.authorizerCalls).toHaveLength(2);
      } finally {
        await gateway.close();
        await cached.gateway.close();
      }
    });

    it.each([undefined, '', '   '])(
      'answers UNAUTHORIZED without asking the authorizer when Authorization is %p',
      async (token) => {
        const before = started.authorizerCalls.length;
        await expectGatewayResponse(await post(started.gateway, token), 'UNAUTHORIZED');
        expect(started.authorizerCalls).toHaveLength(before);
      },
    );

    it('answers UNAUTHORIZED when the authorizer fails with "Unauthorized"', async () => {
      await expectGatewayResponse(await post(started.gateway, 'Bearer forged'), 'UNAUTHORIZED');
    });

    it.each(['Bearer deny', 'Bearer allow-get-only'])(
      'answers ACCESS_DENIED when the policy for %p does not allow the method',
      async (token) => {
        await expectGatewayResponse(await post(started.gateway, token), 'ACCESS_DENIED');
      },
    );

    it.each(['Bearer broken', 'Bearer nested-context'])(
      'answers DEFAULT_5XX when the authorizer fails otherwise or answers nonsense (%p)',
      async (token) => {
        await expectGatewayResponse(await post(started.gateway, token), 'DEFAULT_5XX');
      },
    );
  });

  describe('before the authorizer', () => {
    it.each([
      ['POST', '/unknown'],
      ['GET', '/plants'],
      ['DELETE', '/plants'],
      ['POST', '/plants/1'],
      ['POST', '/'],
    ])('answers %s %s with MISSING_AUTHENTICATION_TOKEN (404)', async (method, path) => {
      const before = started.authorizerCalls.length;
      const response = await fetch(`${started.gateway.url}${path}`, {
        method,
        headers: { Authorization: 'Bearer allow' },
      });
      await expectGatewayResponse(response, 'MISSING_AUTHENTICATION_TOKEN');
      expect(started.authorizerCalls).toHaveLength(before);
    });

    it('answers THROTTLED (429) once the method\u2019s burst is spent, each method on its own, as API Gateway does', async () => {
      const { gateway } = await startWith(echo, {
        throttling: { rateLimit: 0.001, burstLimit: 2 },
      });
      try {
        expect((await post(gateway, 'Bearer allow')).status).toBe(200);
        expect((await post(gateway, 'Bearer allow')).status).toBe(200);
        await expectGatewayResponse(await post(gateway, 'Bearer allow'), 'THROTTLED');
        // Another method has a bucket of its own (a stage's limits apply to each method).
        const read = () =>
          fetch(`${gateway.url}/plants/1`, { headers: { Authorization: 'Bearer allow' } });
        expect((await read()).status).toBe(200);
        expect((await read()).status).toBe(200);
        await expectGatewayResponse(await read(), 'THROTTLED');
      } finally {
        await gateway.close();
      }
    });

    it("answers AWS's own 413 for a body over 10 MB, before the authorizer and the function", async () => {
      const before = started.authorizerCalls.length;
      const response = await post(
        started.gateway,
        'Bearer allow',
        'x'.repeat(10 * 1024 * 1024 + 1),
      );
      expect(response.status).toBe(413);
      expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(await response.text()).toBe('HTTP content length exceeded 10485760 bytes.');
      expect(started.authorizerCalls).toHaveLength(before);
    });

    it("answers API Gateway's 413 when the event would exceed Lambda's 6 MB, without calling the function", async () => {
      let calls = 0;
      const { gateway } = await startWith(async (event) => {
        calls += 1;
        return echo(event, {} as never);
      });
      try {
        // Base64 makes 4.5 MB of body a 6 MB event; just under that still reaches the function.
        const small = await post(gateway, 'Bearer allow', 'x'.repeat(4_500_000));
        expect(small.status).toBe(200);
        const large = await post(gateway, 'Bearer allow', 'x'.repeat(4_800_000));
        expect(large.status).toBe(413);
        expect(large.headers.get('content-type')).toBe('application/json');
        expect(await large.json()).toEqual({ message: 'Request Too Long' });
        expect(calls).toBe(1);
      } finally {
        await gateway.close();
      }
    });
  });

  it('logs one line per request, without the token or the body', async () => {
    const { gateway, logLines } = await startWith(echo);
    try {
      const response = await post(gateway, 'Bearer allow', '{"secret":"do-not-log"}');
      expect(logLines).toHaveLength(1);
      const line = JSON.parse(logLines[0] as string);
      expect(line).toMatchObject({
        method: 'POST',
        resourcePath: '/plants',
        status: 200,
        requestId: response.headers.get('x-amzn-RequestId'),
      });
      expect(line.durationMs).toEqual(expect.any(Number));
      expect(logLines[0]).not.toContain('allow');
      expect(logLines[0]).not.toContain('do-not-log');
    } finally {
      await gateway.close();
    }
  });

  it('logs no part of the path a client sent, so a token put there never reaches the log', async () => {
    const { gateway, logLines } = await startWith(echo);
    const secret = 'eyJhbGciOiJSUzI1NiJ9.c2VjcmV0LXRva2Vu.c2lnbmF0dXJl';
    try {
      for (const target of [
        `/plants/${secret}`,
        `/plants/${secret}?x=1`,
        `/plants#access_token=${secret}`,
        `/plants;access_token=${secret}`,
        `/${secret}`,
        `/plants?access_token=${secret}`,
      ]) {
        const { status } = await rawRequest(gateway, `GET ${target} HTTP/1.1`);
        expect(status).toBeGreaterThanOrEqual(200);
      }
      expect(logLines).toHaveLength(6);
      expect(logLines.join('\n')).not.toContain('c2VjcmV0LXRva2Vu');
      expect(logLines.map((line) => JSON.parse(line).resourcePath)).toEqual([
        '/plants/{id}',
        '/plants/{id}',
        null,
        null,
        null,
        null,
      ]);
    } finally {
      await gateway.close();
    }
  });

  it('answers 500 (DEFAULT_5XX) when the authorizer outlasts its Lambda timeout, caching nothing', async () => {
    const { gateway, authorizerCalls } = await startWith(echo, {
      authorizerTimeoutMilliseconds: 300,
    });
    try {
      const started = performance.now();
      await expectGatewayResponse(await post(gateway, 'Bearer hang'), 'DEFAULT_5XX');
      expect(performance.now() - started).toBeGreaterThanOrEqual(290);
      await expectGatewayResponse(await post(gateway, 'Bearer hang'), 'DEFAULT_5XX');
      expect(authorizerCalls).toHaveLength(2);
    } finally {
      await gateway.close();
    }
  });

  it('fails with PortInUseError when the port is taken', async () => {
    await expect(startWith(echo, { port: started.gateway.port })).rejects.toThrow(PortInUseError);
  });
});

describe('token bucket', () => {
  it('allows a burst, then refills at the rate', () => {
    let now = 0;
    const take = createTokenBucket({ rateLimit: 2, burstLimit: 3 }, () => now);
    expect([take(), take(), take(), take()]).toEqual([true, true, true, false]);
    now = 499;
    expect(take()).toBe(false);
    now = 500;
    expect(take()).toBe(true);
    now = 10_000;
    expect([take(), take(), take(), take()]).toEqual([true, true, true, false]);
  });
});

describe('the stand-in’s own answers', () => {
  let gateway: Started;

  beforeAll(async () => {
    gateway = await startWith(echo, {
      allowedOrigins: ['http://localhost:5173'],
      localPages: (path) =>
        path === '/docs'
          ? { contentType: 'text/html', body: Buffer.from('<p>docs</p>') }
          : undefined,
    });
  });

  afterAll(async () => {
    await gateway?.gateway.close();
  });

  it('says nosniff and no-store on a preflight, a local page and a gateway answer, as every answer does', async () => {
    const preflight = await fetch(`${gateway.gateway.url}/plants`, {
      method: 'OPTIONS',
      headers: { Origin: 'http://localhost:5173', 'Access-Control-Request-Method': 'POST' },
    });
    const page = await fetch(`${gateway.gateway.url}/docs`);
    const missing = await fetch(`${gateway.gateway.url}/nowhere`, {
      headers: { Authorization: 'Bearer allow' },
    });
    for (const response of [preflight, page, missing]) {
      expect([
        response.status,
        response.headers.get('x-content-type-options'),
        response.headers.get('cache-control'),
      ]).toEqual([response.status, 'nosniff', 'no-store']);
    }
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('content-type')).toBeNull();
  });
});

describe('requests refused before they are routed', () => {
  let gateway: Started;
  const allowed = 'http://localhost:5173';

  beforeAll(async () => {
    gateway = await startWith(echo, { allowedOrigins: [allowed] });
  });

  afterAll(async () => {
    await gateway?.gateway.close();
  });

  it.each([
    ['a 17 KB If-Match', [`If-Match: "${'1'.repeat(17 * 1024)}"`]],
    ['a control byte in a header', ['X-Note: a\u0001b']],
    ['Expect: foo', ['Expect: foo']],
  ])(
    'answers %s 400/40000 with a request id and the CORS headers for an allowed origin',
    async (_case, headers) => {
      const answer = await rawRequest(gateway.gateway, 'POST /plants HTTP/1.1', [
        `Origin: ${allowed}`,
        ...headers,
      ]);
      expect([answer.status, JSON.parse(answer.body)]).toEqual([
        400,
        gatewayResponses.DEFAULT_4XX.body,
      ]);
      expect(answer.headers['access-control-allow-origin']).toBe(allowed);
      expect(answer.headers['access-control-expose-headers']).toContain('x-amzn-RequestId');
      expect(answer.headers['x-amzn-requestid']).toMatch(/^[0-9a-f-]{36}$/);
      expect(answer.headers['x-content-type-options']).toBe('nosniff');
    },
  );
});
