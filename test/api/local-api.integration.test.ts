/**
 * The local API end to end, as a client sees it: real tokens from the development issuer, the
 * real authorizer and create-plant handlers behind the gateway stand-in, DynamoDB Local (the test
 * run's, with a table of this file's own). Every response is checked against openapi.yaml.
 *
 * @services dynamodb-local
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHandler as createCreatePlantHandler } from '../../functions/create-plant/create-handler.ts';
import { createDocumentClient } from '../../functions/shared/platform/dynamodb.ts';
import { createLogger } from '../../functions/shared/platform/logger.ts';
import { type ApiGateway, startApiGateway } from '../../local/api-gateway/gateway.ts';
import { type LocalApi, startLocalApi } from '../../local/local-api.ts';
import { testStoreUrl } from '../support/test-store.ts';
import { expectDocumentedResponse } from './openapi.ts';

const silentLogger = createLogger({}, () => {});

let keysDirectory: string;
let api: LocalApi;
let token: string;
let tableCounter = 0;

/**
 * A local API on a free port with a table of its own in the run's DynamoDB Local; unthrottled
 * (its many requests of one route would spend the dev stage's share) unless `gateway` says.
 */
function startTestApi(gateway: Parameters<typeof startLocalApi>[0]['gateway'] = {}) {
  tableCounter += 1;
  return startLocalApi({
    port: 0,
    dynamoDbUrl: testStoreUrl(),
    tableName: `plants-e2e-${process.pid}-${Date.now()}-${tableCounter}`,
    keysDirectory,
    logger: silentLogger,
    throttlingStage: 'off',
    gateway,
  });
}

function createPlant(
  body: unknown,
  { authorization = `Bearer ${token}`, contentType = 'application/json', url = api.url } = {},
) {
  return fetch(`${url}/plants`, {
    method: 'POST',
    headers: {
      ...(authorization === '' ? {} : { Authorization: authorization }),
      'Content-Type': contentType,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

beforeAll(async () => {
  keysDirectory = await mkdtemp(join(tmpdir(), 'plant-store-e2e-keys-'));
  api = await startTestApi();
  token = api.signToken();
});

afterAll(async () => {
  await api?.stop();
  await rm(keysDirectory, { recursive: true, force: true });
});

describe('POST /plants on the local API', () => {
  it('answers 200 with the Plant and the same again for an identical retry', async () => {
    const plant = { id: 101, name: 'Monstera', tag: 'tropical', price: 12 };
    const first = await createPlant(plant);
    expect(first.status).toBe(200);
    expect(await expectDocumentedResponse(first)).toEqual({ name: 'Monstera', tag: 'tropical' });
    expect(first.headers.get('x-amzn-RequestId')).toMatch(/^[0-9a-f-]{36}$/);

    const retry = await createPlant(plant);
    expect(retry.status).toBe(200);
    expect(await expectDocumentedResponse(retry)).toEqual({ name: 'Monstera', tag: 'tropical' });
  });

  it('answers a plant without a tag without one', async () => {
    const response = await createPlant({ id: 102, name: 'Fern' });
    expect(response.status).toBe(200);
    expect(await expectDocumentedResponse(response)).toEqual({ name: 'Fern' });
  });

  it('answers 400/40009 for an existing id with different content', async () => {
    await createPlant({ id: 103, name: 'Cactus' });
    const response = await createPlant({ id: 103, name: 'Not a cactus' });
    expect(response.status).toBe(400);
    expect(await expectDocumentedResponse(response)).toMatchObject({ error: 40009 });
  });

  it('keeps int64 ids exact: 2^63-1 and 2^63-2 are different plants', async () => {
    // Written as text: a JavaScript number would round both to 2^63.
    const largest = await createPlant('{"id":9223372036854775807,"name":"Largest"}');
    const nextToLargest = await createPlant('{"id":9223372036854775806,"name":"Next"}');
    expect([largest.status, nextToLargest.status]).toEqual([200, 200]);
    expect(await expectDocumentedResponse(largest)).toEqual({ name: 'Largest' });
    expect(await expectDocumentedResponse(nextToLargest)).toEqual({ name: 'Next' });

    const outOfRange = await createPlant('{"id":9223372036854775808,"name":"Too large"}');
    expect(outOfRange.status).toBe(400);
    expect(await expectDocumentedResponse(outOfRange)).toMatchObject({ error: 40002 });
  });

  it.each([
    ['40001 for a body that is not JSON', '{"id": 1,', 'application/json', 40001],
    ['40001 for an empty body', '', 'application/json', 40001],
    ['40002 for a plant without a name', '{"id": 104}', 'application/json', 40002],
    ['40002 for a null tag', '{"id": 104, "name": "Ivy", "tag": null}', 'application/json', 40002],
    ['40003 for another content type', '{"id": 104, "name": "Ivy"}', 'text/plain', 40003],
    [
      '40004 for a body over 16 KiB',
      `{"id":104,"name":"${'x'.repeat(16_384)}"}`,
      'application/json',
      40004,
    ],
  ])('answers 400/%s', async (_case, body, contentType, error) => {
    const response = await createPlant(body, { contentType });
    expect(response.status).toBe(400);
    expect(await expectDocumentedResponse(response)).toMatchObject({ error });
  });

  it('names the failing field in a 40002 message', async () => {
    const response = await createPlant({ id: 105 });
    const body = (await expectDocumentedResponse(response)) as { message: string };
    expect(body.message).toMatch(/\bname\b/);
  });

  describe('authentication', () => {
    it.each([
      ['no Authorization header', () => ''],
      ['a malformed token', () => 'Bearer not-a-jwt'],
      ['another scheme', () => `Basic ${token}`],
      ['an expired token', () => `Bearer ${api.signToken({ expiresInSeconds: -60 })}`],
      ['a token signed by another key', () => `Bearer ${token.slice(0, -8)}AAAAAAAA`],
    ])('answers 401/40100 with WWW-Authenticate for %s', async (_case, authorization) => {
      const response = await createPlant(
        { id: 106, name: 'Ivy' },
        { authorization: authorization() },
      );
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer /);
      expect(await expectDocumentedResponse(response)).toMatchObject({ error: 40100 });
    });

    it('accepts the scheme name in any case', async () => {
      const response = await createPlant(
        { id: 107, name: 'Ivy' },
        { authorization: `bearer ${token}` },
      );
      expect(response.status).toBe(200);
      await expectDocumentedResponse(response);
    });

    it('answers 403/40300 for a valid token without the plants/write scope', async () => {
      const readOnly = api.signToken({ scope: 'plants/read' });
      const response = await createPlant(
        { id: 108, name: 'Ivy' },
        { authorization: `Bearer ${readOnly}` },
      );
      expect(response.status).toBe(403);
      expect(response.headers.get('www-authenticate')).toMatch(/insufficient_scope/);
      expect(await expectDocumentedResponse(response)).toMatchObject({ error: 40300 });
    });
  });

  describe('bodies that are not UTF-8', () => {
    it.each([
      ['an invalid byte inside a string', Buffer.from('{"id":120,"name":"a\xFFb"}', 'latin1')],
      [
        'a lone continuation byte',
        Buffer.from([...Buffer.from('{"id":121,"name":"'), 0x80, 0x22, 0x7d]),
      ],
      [
        'an overlong encoding',
        Buffer.from([...Buffer.from('{"id":122,"name":"'), 0xc0, 0xaf, 0x22, 0x7d]),
      ],
      ['6,000 bytes of 0xFF (12,000 once turned into U+FFFD)', Buffer.alloc(6_000, 0xff)],
    ])('answers 400/40001 for %s, storing nothing', async (_case, bytes) => {
      const response = await fetch(`${api.url}/plants`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: bytes,
      });
      expect(response.status).toBe(400);
      expect(await expectDocumentedResponse(response)).toMatchObject({ error: 40001 });
      for (const id of [120, 121, 122]) {
        const read = await fetch(`${api.url}/plants/${id}`, {
          headers: { Authorization: `Bearer ${token}` },
        });
        expect(read.status).toBe(404);
      }
    });
  });

  describe('the gateway', () => {
    it.each([
      ['PUT', '/plants'],
      ['POST', '/plant'],
      ['POST', '/plants/1'],
      ['GET', '/plants/1/tags'],
      ['GET', '/'],
    ])('answers %s %s with 404/40400', async (method, path) => {
      const response = await fetch(`${api.url}${path}`, {
        method,
        headers: { Authorization: `Bearer ${token}` },
      });
      expect(response.status).toBe(404);
      expect(await expectDocumentedResponse(response)).toMatchObject({ error: 40400 });
    });

    it('answers 429/42900 with Retry-After beyond the stage throttling', async () => {
      const throttled = await startTestApi({ throttling: { rateLimit: 0.001, burstLimit: 1 } });
      try {
        const allowed = await createPlant({ id: 109, name: 'Ivy' }, { url: throttled.url });
        expect(allowed.status).toBe(200);
        await expectDocumentedResponse(allowed);
        const refused = await createPlant({ id: 109, name: 'Ivy' }, { url: throttled.url });
        expect(refused.status).toBe(429);
        expect(await expectDocumentedResponse(refused)).toMatchObject({ error: 42900 });
      } finally {
        await throttled.stop();
      }
    });
  });

  describe('faults', () => {
    let gateway: ApiGateway | undefined;

    afterAll(async () => {
      await gateway?.close();
    });

    /** A gateway whose authorizer allows everything, in front of `handler`. */
    async function startGatewayWith(
      handler: Parameters<typeof startApiGateway>[0]['routes'][0]['handler'],
    ) {
      await gateway?.close();
      gateway = await startApiGateway({
        port: 0,
        logger: silentLogger,
        authorizer: async (event) => ({
          principalId: 'client',
          policyDocument: {
            Version: '2012-10-17',
            Statement: [
              { Action: 'execute-api:Invoke', Effect: 'Allow', Resource: event.methodArn },
            ],
          },
        }),
        routes: [
          { httpMethod: 'POST', resourcePath: '/plants', functionName: 'create-plant', handler },
        ],
      });
      return gateway;
    }

    it('answers 500/50000 when the function fails', async () => {
      const failing = await startGatewayWith(async () => {
        throw new Error('the function crashed');
      });
      const response = await createPlant({ id: 110, name: 'Ivy' }, { url: failing.url });
      expect(response.status).toBe(500);
      const body = await expectDocumentedResponse(response);
      expect(body).toMatchObject({ error: 50000 });
      expect(JSON.stringify(body)).not.toContain('crashed');
    });

    it('answers 503/50300 when the store keeps failing', async () => {
      // A store answering every call with DynamoDB's 500 InternalServerError.
      const failingStore = createServer((_request, response) => {
        response.writeHead(500, {
          'Content-Type': 'application/x-amz-json-1.0',
          'x-amzn-ErrorType': 'InternalServerError',
        });
        response.end('{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError"}');
      });
      await new Promise<void>((resolve) => failingStore.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = failingStore.address() as AddressInfo;
        const unavailable = await startGatewayWith(
          createCreatePlantHandler({
            documentClient: createDocumentClient({
              url: `http://127.0.0.1:${port}`,
              maxAttempts: 1,
            }),
            tableName: 'plants',
            logger: silentLogger,
          }),
        );
        const response = await createPlant({ id: 111, name: 'Ivy' }, { url: unavailable.url });
        expect(response.status).toBe(503);
        expect(await expectDocumentedResponse(response)).toMatchObject({ error: 50300 });
      } finally {
        failingStore.closeAllConnections();
        await new Promise((resolve) => failingStore.close(resolve));
      }
    });
  });
});
