import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayTokenAuthorizerEvent,
} from 'aws-lambda';
import { createLogger } from '../../functions/shared/logger.ts';
import { gatewayResponses } from '../../infra/gateway-responses.ts';
import { createTokenBucket } from '../../local/api-gateway/throttling.ts';
import {
  type ApiGateway,
  type ApiGatewayOptions,
  PortInUseError,
  type ProxyIntegrationHandler,
  startApiGateway,
} from '../../local/api-gateway.ts';

/** A stand-in authorizer: the token names the outcome, as the real one decides from a JWT. */
function fakeAuthorizer(calls: APIGatewayTokenAuthorizerEvent[]) {
  return async (event: APIGatewayTokenAuthorizerEvent): Promise<APIGatewayAuthorizerResult> => {
    calls.push(event);
    const stageArn = event.methodArn.split('/').slice(0, 2).join('/');
    const policy = (effect: string, resource: string, context?: Record<string, unknown>) =>
      ({
        principalId: 'client-1',
        policyDocument: {
          Version: '2012-10-17',
          Statement: [{ Action: 'execute-api:Invoke', Effect: effect, Resource: resource }],
        },
        context,
      }) as APIGatewayAuthorizerResult;
    switch (event.authorizationToken) {
      case 'Bearer allow':
        return policy('Allow', `${stageArn}/*/*`, { sub: 'client-1', scope: 'plants/write' });
      case 'Bearer deny':
        return policy('Deny', `${stageArn}/*/*`);
      case 'Bearer allow-get-only':
        return policy('Allow', `${stageArn}/GET/*`);
      case 'Bearer nested-context':
        return policy('Allow', `${stageArn}/*/*`, { claims: { sub: 'client-1' } });
      case 'Bearer broken':
        throw new TypeError('cannot read properties of undefined');
      case 'Bearer hang':
        return new Promise(() => {});
      default:
        throw new Error('Unauthorized');
    }
  };
}

/** Echoes the proxy event it received, so tests can look at it. */
const echo: ProxyIntegrationHandler = async (event) => ({
  statusCode: 200,
  body: JSON.stringify(event),
});

interface Started {
  gateway: ApiGateway;
  authorizerCalls: APIGatewayTokenAuthorizerEvent[];
  logLines: string[];
}

async function startWith(
  handler: ProxyIntegrationHandler,
  options: Partial<ApiGatewayOptions> = {},
): Promise<Started> {
  const authorizerCalls: APIGatewayTokenAuthorizerEvent[] = [];
  const logLines: string[] = [];
  const gateway = await startApiGateway({
    port: 0,
    routes: [
      { httpMethod: 'POST', resourcePath: '/plants', functionName: 'create-plant', handler },
      { httpMethod: 'GET', resourcePath: '/plants/{id}', functionName: 'get-plant', handler },
    ],
    authorizer: fakeAuthorizer(authorizerCalls),
    logger: createLogger({}, (line) => logLines.push(line)),
    ...options,
  });
  return { gateway, authorizerCalls, logLines };
}

function post(gateway: ApiGateway, token: string | undefined, body = '{"id":1}', path = '/plants') {
  return fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      ...(token === undefined ? {} : { Authorization: token }),
    },
    body,
  });
}

async function expectGatewayAnswer(
  response: Response,
  type: keyof typeof gatewayResponses,
): Promise<void> {
  const expected = gatewayResponses[type];
  expect(response.status).toBe(expected.statusCode);
  for (const [name, value] of Object.entries(expected.headers)) {
    expect(response.headers.get(name)).toBe(value);
  }
  expect(await response.json()).toEqual(expected.body);
}

describe('local API Gateway stand-in', () => {
  let started: Started;

  beforeAll(async () => {
    started = await startWith(echo);
  });

  afterAll(async () => {
    await started?.gateway.close();
  });

  describe('integration', () => {
    it('passes a REST API proxy event with the authorizer context to the function', async () => {
      const response = await fetch(`${started.gateway.url}/plants?dry=1&dry=2`, {
        method: 'POST',
        headers: {
          Authorization: 'Bearer allow',
          'Content-Type': 'application/json',
          'X-Trace': 'a',
        },
        body: '{"id":7,"name":"Fern"}',
      });
      expect(response.status).toBe(200);
      const event = (await response.json()) as APIGatewayProxyEvent;

      expect(event).toMatchObject({
        resource: '/plants',
        path: '/plants',
        httpMethod: 'POST',
        // The stack's binary media type */*: every body base64-encoded, exactly as sent.
        body: Buffer.from('{"id":7,"name":"Fern"}').toString('base64'),
        isBase64Encoded: true,
        pathParameters: null,
        stageVariables: null,
        queryStringParameters: { dry: '2' },
        multiValueQueryStringParameters: { dry: ['1', '2'] },
      });
      expect(event.headers['Content-Type']).toBe('application/json');
      expect(event.multiValueHeaders['X-Trace']).toEqual(['a']);
      expect(event.requestContext).toMatchObject({
        stage: 'local',
        path: '/plants',
        domainName: `127.0.0.1:${started.gateway.port}`,
        resourcePath: '/plants',
        httpMethod: 'POST',
        authorizer: { principalId: 'client-1', sub: 'client-1', scope: 'plants/write' },
        identity: { sourceIp: '127.0.0.1' },
      });
      expect(event.requestContext.requestId).toMatch(/^[0-9a-f-]{36}$/);
      expect(event.requestContext.requestTimeEpoch).toBeLessThanOrEqual(Date.now());
      expect(response.headers.get('x-amzn-RequestId')).toBe(event.requestContext.requestId);
    });

    it('hands the function the bytes as sent, UTF-8 or not', async () => {
      const bytes = Buffer.from([0x7b, 0x22, 0x61, 0xff, 0xfe, 0x22, 0x7d]);
      const response = await fetch(`${started.gateway.url}/plants`, {
        method: 'POST',
        headers: { Authorization: 'Bearer allow', 'Content-Type': 'application/json' },
        body: bytes,
      });
      const event = (await response.json()) as APIGatewayProxyEvent;
      expect(Buffer.from(event.body ?? '', 'base64')).toEqual(bytes);
    });

    it('passes path parameters as sent (not percent-decoded), as API Gateway does', async () => {
      for (const [path, id] of [
        ['/plants/42', '42'],
        ['/plants/-7', '-7'],
        ['/plants/%31', '%31'],
        ['/plants/a%2Fb', 'a%2Fb'],
      ] as const) {
        const response = await fetch(`${started.gateway.url}${path}?limit=1`, {
          headers: { Authorization: 'Bearer allow' },
        });
        const event = (await response.json()) as APIGatewayProxyEvent;
        expect(event).toMatchObject({ resource: '/plants/{id}', path, pathParameters: { id } });
        expect(event.requestContext.resourcePath).toBe('/plants/{id}');
      }
    });

    it('matches whole segments only: other paths and methods answer 404/40400', async () => {
      for (const [method, path] of [
        ['GET', '/plants/'],
        ['GET', '/plants/1/2'],
        ['GET', '/plants//1'],
        ['DELETE', '/plants/1'],
        ['GET', '/plantsx/1'],
      ] as const) {
        const response = await fetch(`${started.gateway.url}${path}`, {
          method,
          headers: { Authorization: 'Bearer allow' },
        });
        await expectGatewayAnswer(response, 'MISSING_AUTHENTICATION_TOKEN');
      }
    });

    it('passes headers and query parameters named like Object.prototype members through', async () => {
      const names = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'];
      const query = names.map((name) => `${name}=q-${name}`).join('&');
      // A raw request: fetch drops a header named `__proto__` before sending it.
      const { status, body } = await rawRequest(
        started.gateway,
        `POST /plants?${query} HTTP/1.1`,
        names.map((name) => `${name}: h-${name}`),
      );
      expect(status).toBe(200);
      const event = JSON.parse(body) as APIGatewayProxyEvent;
      // Own entries, read without the prototype's accessors (`__proto__` would be one).
      const entries = (map: object | null) => new Map(Object.entries(map ?? {}));
      for (const name of names) {
        expect(entries(event.multiValueHeaders).get(name)).toEqual([`h-${name}`]);
        expect(entries(event.headers).get(name)).toBe(`h-${name}`);
        expect(entries(event.queryStringParameters).get(name)).toBe(`q-${name}`);
      }
    });

    it('answers an Expect it cannot meet in the Error shape (400/40000), not with an empty 417', async () => {
      const { status, body } = await rawRequest(started.gateway, 'POST /plants HTTP/1.1', [
        'Expect: something-else',
      ]);
      expect(status).toBe(400);
      expect(JSON.parse(body)).toEqual(gatewayResponses.DEFAULT_4XX.body);
    });

    it('logs a client that leaves mid-body as that: no answer, no error line, no 5xx', async () => {
      const before = started.logLines.length;
      await new Promise<void>((resolve, reject) => {
        const socket = connect(started.gateway.port, '127.0.0.1', () => {
          socket.write(
            'POST /plants HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer allow\r\n' +
              'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"id":',
          );
          setTimeout(() => socket.destroy(), 100);
        });
        socket.on('close', () => resolve());
        socket.on('error', reject);
      });
      const deadline = Date.now() + 5_000;
      while (started.logLines.length === before && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const lines = started.logLines.slice(before).map((line) => JSON.parse(line));
      expect(lines).toEqual([
        expect.objectContaining({
          level: 'info',
          message: 'request abandoned by the client',
          resourcePath: '/plants',
          status: null,
        }),
      ]);
    });

    it('answers and logs a body the HTTP parser refuses mid-way as a refusal, not as a client gone', async () => {
      const before = started.logLines.length;
      const answer = await new Promise<string>((resolve, reject) => {
        let received = '';
        const socket = connect(started.gateway.port, '127.0.0.1', () => {
          socket.write(
            'POST /plants HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer allow\r\n' +
              'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n' +
              'zz\r\n{"id":1}\r\n0\r\n\r\n',
          );
        });
        socket.on('data', (chunk: Buffer) => {
          received += chunk.toString('utf8');
        });
        socket.on('close', () => resolve(received));
        socket.on('error', reject);
      });
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(JSON.parse(answer.split('\r\n\r\n')[1] ?? '')).toEqual(
        gatewayResponses.DEFAULT_4XX.body,
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      const messages = started.logLines.slice(before).map((line) => JSON.parse(line).message);
      expect(messages).toEqual(['request refused by the HTTP parser']);
    });

    it('tells the function the scheme is http, whatever the client claims', async () => {
      const response = await fetch(`${started.gateway.url}/plants`, {
        method: 'POST',
        headers: { Authorization: 'Bearer allow', 'x-forwarded-proto': 'https' },
        body: '{}',
      });
      const event = (await response.json()) as APIGatewayProxyEvent;
      expect(event.multiValueHeaders['X-Forwarded-Proto']).toEqual(['http']);
      expect(event.multiValueHeaders['x-forwarded-proto']).toBeUndefined();
    });

    it('passes no query strings and a null body as null', async () => {
      const response = await post(started.gateway, 'Bearer allow', '');
      const event = (await response.json()) as APIGatewayProxyEvent;
      expect(event.queryStringParameters).toBeNull();
      expect(event.multiValueQueryStringParameters).toBeNull();
      expect(event.body).toBeNull();
    });

    it("answers the function's status, headers and body", async () => {
      const { gateway } = await startWith(async () => ({
        statusCode: 201,
        headers: { 'Content-Type': 'text/plain', 'X-Count': 2 },
        multiValueHeaders: { 'Set-Cookie': ['a=1', 'b=2'] },
        body: Buffer.from('hello').toString('base64'),
        isBase64Encoded: true,
      }));
      try {
        const response = await post(gateway, 'Bearer allow');
        expect(response.status).toBe(201);
        expect(response.headers.get('content-type')).toBe('text/plain');
        expect(response.headers.get('x-count')).toBe('2');
        expect(response.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
        expect(await response.text()).toBe('hello');
      } finally {
        await gateway.close();
      }
    });

    it('labels a function answer without a content type as JSON, as API Gateway does', async () => {
      const { gateway } = await startWith(async () => ({ statusCode: 200, body: '{}' }));
      try {
        const response = await post(gateway, 'Bearer allow');
        expect(response.headers.get('content-type')).toBe('application/json');
      } finally {
        await gateway.close();
      }
    });

    it.each<[string, ProxyIntegrationHandler]>([
      [
        'throws',
        async () => {
          throw new Error('store exploded');
        },
      ],
      ['answers no status code', async () => ({ body: '{}' }) as unknown as APIGatewayProxyResult],
      ['answers a non-string body', async () => ({ statusCode: 200, body: {} }) as never],
    ])('answers DEFAULT_5XX when the function %s', async (_case, handler) => {
      const { gateway } = await startWith(handler);
      try {
        await expectGatewayAnswer(await post(gateway, 'Bearer allow'), 'DEFAULT_5XX');
      } finally {
        await gateway.close();
      }
    });

    it('answers DEFAULT_5XX when the function outlives its own Lambda timeout', async () => {
      let remainingAtStart = 0;
      const gateway = await startApiGateway({
        port: 0,
        routes: [
          {
            httpMethod: 'POST',
            resourcePath: '/plants',
            functionName: 'create-plant',
            timeoutMilliseconds: 50,
            handler: (_event, context) => {
              remainingAtStart = context.getRemainingTimeInMillis();
              return new Promise((resolve) =>
                setTimeout(() => resolve({ statusCode: 200, body: '' }), 500),
              );
            },
          },
        ],
        authorizer: fakeAuthorizer([]),
        logger: createLogger({}, () => {}),
      });
      try {
        await expectGatewayAnswer(await post(gateway, 'Bearer allow'), 'DEFAULT_5XX');
        expect(remainingAtStart).toBeGreaterThan(0);
        expect(remainingAtStart).toBeLessThanOrEqual(50);
      } finally {
        await gateway.close();
      }
    });

    it('answers INTEGRATION_TIMEOUT when the function outlives the integration timeout', async () => {
      const { gateway } = await startWith(
        () =>
          new Promise((resolve) => setTimeout(() => resolve({ statusCode: 200, body: '' }), 500)),
        { integrationTimeoutMilliseconds: 50 },
      );
      try {
        await expectGatewayAnswer(await post(gateway, 'Bearer allow'), 'INTEGRATION_TIMEOUT');
      } finally {
        await gateway.close();
      }
    });
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
        await expectGatewayAnswer(await post(started.gateway, token), 'UNAUTHORIZED');
        expect(started.authorizerCalls).toHaveLength(before);
      },
    );

    it('answers UNAUTHORIZED when the authorizer fails with "Unauthorized"', async () => {
      await expectGatewayAnswer(await post(started.gateway, 'Bearer forged'), 'UNAUTHORIZED');
    });

    it.each(['Bearer deny', 'Bearer allow-get-only'])(
      'answers ACCESS_DENIED when the policy for %p does not allow the method',
      async (token) => {
        await expectGatewayAnswer(await post(started.gateway, token), 'ACCESS_DENIED');
      },
    );

    it.each(['Bearer broken', 'Bearer nested-context'])(
      'answers DEFAULT_5XX when the authorizer fails otherwise or answers nonsense (%p)',
      async (token) => {
        await expectGatewayAnswer(await post(started.gateway, token), 'DEFAULT_5XX');
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
      await expectGatewayAnswer(response, 'MISSING_AUTHENTICATION_TOKEN');
      expect(started.authorizerCalls).toHaveLength(before);
    });

    it('answers THROTTLED (429) once the burst is spent', async () => {
      const { gateway } = await startWith(echo, {
        throttling: { rateLimit: 0.001, burstLimit: 2 },
      });
      try {
        expect((await post(gateway, 'Bearer allow')).status).toBe(200);
        expect((await post(gateway, 'Bearer allow')).status).toBe(200);
        await expectGatewayAnswer(await post(gateway, 'Bearer allow'), 'THROTTLED');
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
      await expectGatewayAnswer(await post(gateway, 'Bearer hang'), 'DEFAULT_5XX');
      expect(performance.now() - started).toBeGreaterThanOrEqual(290);
      await expectGatewayAnswer(await post(gateway, 'Bearer hang'), 'DEFAULT_5XX');
      expect(authorizerCalls).toHaveLength(2);
    } finally {
      await gateway.close();
    }
  });

  it('fails with PortInUseError when the port is taken', async () => {
    await expect(startWith(echo, { port: started.gateway.port })).rejects.toThrow(PortInUseError);
  });
});

/** Sends a request line and headers as written (curl and fetch would normalise them). */
function rawRequest(
  gateway: ApiGateway,
  requestLine: string,
  headers: readonly string[] = [],
): Promise<{ status: number; body: string }> {
  const head = [requestLine, 'Host: 127.0.0.1', 'Authorization: Bearer allow', ...headers];
  return new Promise((resolve, reject) => {
    const socket = connect(gateway.port, '127.0.0.1', () => {
      socket.end(`${head.join('\r\n')}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
    });
    let answer = '';
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('utf8');
    });
    socket.on('end', () => {
      const [statusLine = '', body = ''] = answer.split(/\r\n\r\n/);
      resolve({ status: Number(statusLine.split(' ')[1]), body });
    });
    socket.on('error', reject);
  });
}

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
