/**
 * The local API Gateway stand-in's Lambda proxy integration: the event a function gets (path,
 * query, headers, body as API Gateway passes them) and the answer made of what it returns.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { createLogger } from '../../functions/shared/platform/logger.ts';
import { gatewayResponses } from '../../infra/gateway-responses.ts';
import { type ProxyIntegrationHandler, startApiGateway } from '../../local/api-gateway/gateway.ts';
import {
  echo,
  expectGatewayResponse,
  fakeAuthorizer,
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
        await expectGatewayResponse(response, 'MISSING_AUTHENTICATION_TOKEN');
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
        await expectGatewayResponse(await post(gateway, 'Bearer allow'), 'DEFAULT_5XX');
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
        await expectGatewayResponse(await post(gateway, 'Bearer allow'), 'DEFAULT_5XX');
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
        await expectGatewayResponse(await post(gateway, 'Bearer allow'), 'INTEGRATION_TIMEOUT');
      } finally {
        await gateway.close();
      }
    });
  });
});
