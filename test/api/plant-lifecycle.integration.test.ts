/**
 * The whole plant lifecycle through the local API as a client sees it: real tokens of each
 * scope, the real authorizer with its 300 s per-token cache, every handler behind the gateway
 * stand-in, DynamoDB Local. Every response is checked against openapi.yaml.
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
import { expectDocumentedResponse } from './openapi.ts';

let keysDirectory: string;
let api: LocalApi;

type Operation = (typeof routes)[number]['operationId'];

/** An endpoint id no client has: each endpoint operation a token may call answers 404 for it. */
const missingEndpoint = '/webhook-endpoints/ep_00000000000000000000000000';

/**
 * One request of each operation; the plant read and changed (id 1) exists and every change
 * leaves it as it is, the one deleted (id 2) never does. The endpoint operations change nothing
 * either: they name an endpoint the token's subject does not have, and the create asks for no
 * event (each answered by the function, so the authorizer let it through).
 */
function send(operation: Operation, token: string): Promise<Response> {
  const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
  const patch = { ...headers, 'Content-Type': 'application/merge-patch+json', 'If-Match': '*' };
  switch (operation) {
    case 'replacePlant':
      return fetch(`${api.url}/plants/1`, {
        method: 'PUT',
        headers: { ...headers, 'If-Match': '*' },
        body: '{"name":"Monstera"}',
      });
    case 'patchPlant':
      return fetch(`${api.url}/plants/1`, { method: 'PATCH', headers: patch, body: '{}' });
    case 'createPlant':
      return fetch(`${api.url}/plants`, {
        method: 'POST',
        headers,
        body: '{"id":1,"name":"Monstera"}',
      });
    case 'listPlants':
      return fetch(`${api.url}/plants?limit=5`, { headers });
    case 'getPlant':
      return fetch(`${api.url}/plants/1`, { headers });
    case 'deletePlant':
      return fetch(`${api.url}/plants/2`, { method: 'DELETE', headers });
    case 'createWebhookEndpoint':
      return fetch(`${api.url}/webhook-endpoints`, {
        method: 'POST',
        headers,
        body: '{"url":"http://127.0.0.1:9/hooks","events":[]}',
      });
    case 'listWebhookEndpoints':
      return fetch(`${api.url}/webhook-endpoints?limit=1`, { headers });
    case 'updateWebhookEndpoint':
      return fetch(`${api.url}${missingEndpoint}`, { method: 'PATCH', headers: patch, body: '{}' });
    case 'recoverWebhookEndpoint':
      return fetch(`${api.url}${missingEndpoint}/recover`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ since: new Date(Date.now() - 60_000).toISOString() }),
      });
    default: {
      const route = routes.find((candidate) => candidate.operationId === operation);
      const path = route?.path.replace('/webhook-endpoints/{endpointId}', missingEndpoint) ?? '';
      return fetch(`${api.url}${path}`, { method: route?.method ?? 'GET', headers });
    }
  }
}

/** What each operation answers a token allowed to call it (the endpoint ones: 400 and 404). */
const successStatus: Record<Operation, number> = {
  createPlant: 200,
  listPlants: 200,
  getPlant: 200,
  replacePlant: 200,
  patchPlant: 200,
  deletePlant: 204,
  createWebhookEndpoint: 400,
  listWebhookEndpoints: 200,
  getWebhookEndpoint: 404,
  updateWebhookEndpoint: 404,
  deleteWebhookEndpoint: 404,
  getWebhookEndpointSecret: 404,
  rotateWebhookEndpointSecret: 404,
  testWebhookEndpoint: 404,
  listWebhookEndpointAttempts: 404,
  recoverWebhookEndpoint: 404,
};

/**
 * Orders of the operations in which each one comes first, and each comes both before and after
 * every other: each operation first, the rest after it in the table's order and reversed. A
 * token's cached policy is decided by its first request, so these are the orders that can differ
 * (all 720 orders of six would be 60 times the requests and show nothing more).
 */
function orders<T>(items: readonly T[]): T[][] {
  return items.flatMap((first, index) => {
    const rest = [...items.slice(0, index), ...items.slice(index + 1)];
    return [
      [first, ...rest],
      [first, ...rest.reverse()],
    ];
  });
}

beforeAll(async () => {
  keysDirectory = await mkdtemp(join(tmpdir(), 'plant-store-lifecycle-keys-'));
  api = await startLocalApi({
    port: 0,
    dynamoDbUrl: testStoreUrl(),
    tableName: `plants-lifecycle-${process.pid}-${Date.now()}`,
    keysDirectory,
    throttlingStage: 'off',
    logger: createLogger({}, () => {}),
  });
  const setUp = await send('createPlant', api.signToken());
  expect(setUp.status).toBe(200);
});

afterAll(async () => {
  await api?.stop();
  await rm(keysDirectory, { recursive: true, force: true });
});

describe('scopes, through the authorizer and its per-token cache', () => {
  const operations = routes.map((route) => route.operationId) as Operation[];
  const endpointOperations = routes
    .filter((route) => (route.scopes as readonly string[]).includes('webhooks/manage'))
    .map((route) => route.operationId);
  // An endpoint receives plant events: pointing one at them needs plants/read too.
  const pointingAtPlants = [
    'createWebhookEndpoint',
    'updateWebhookEndpoint',
    'recoverWebhookEndpoint',
  ];
  const managingOnly = endpointOperations.filter(
    (operation) => !pointingAtPlants.includes(operation),
  );
  const plantOperations = operations.filter(
    (operation) => !(endpointOperations as readonly string[]).includes(operation),
  );
  const grants: Record<string, readonly Operation[]> = {
    'plants/read': ['listPlants', 'getPlant'],
    'plants/write': ['createPlant', 'replacePlant', 'patchPlant', 'deletePlant'],
    'plants/read plants/write': plantOperations,
    'webhooks/manage': managingOnly,
    'plants/read webhooks/manage': ['listPlants', 'getPlant', ...endpointOperations],
    'plants/read plants/write webhooks/manage': operations,
    '': [],
    'plants/admin openid webhooks/admin': [],
  };

  it.each(Object.entries(grants))(
    'a token with scope "%s" gets exactly its operations in every order within the cache TTL',
    async (scope, allowed) => {
      for (const order of orders(operations)) {
        // A new token per order: its first request decides what the gateway caches.
        const token = api.signToken({ scope, subject: `client-${order.join('-')}` });
        for (const operation of [...order, ...order]) {
          const response = await send(operation, token);
          const expected = allowed.includes(operation) ? successStatus[operation] : 403;
          expect([operation, response.status]).toEqual([operation, expected]);
          const body = await expectDocumentedResponse(response, operation);
          if (expected === 403) expect(body).toMatchObject({ error: 40300 });
          if (expected === 404) expect(body).toMatchObject({ error: 40402 });
          if (expected === 400) expect(body).toMatchObject({ error: 40026 });
        }
      }
    },
  );
});

describe('the lifecycle', () => {
  it('creates, lists, reads and deletes, each read seeing the last acknowledged write', async () => {
    const token = api.signToken();
    const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
    const body = '{"id":9223372036854775807,"name":"Fern","tag":"shade"}';
    const stored = '{"id":9223372036854775807,"name":"Fern","tag":"shade"}';

    const created = await fetch(`${api.url}/plants`, { method: 'POST', headers, body });
    expect(await expectDocumentedResponse(created, 'createPlant')).toEqual({
      name: 'Fern',
      tag: 'shade',
    });
    const read = await fetch(`${api.url}/plants/9223372036854775807`, { headers });
    expect(read.status).toBe(200);
    // The exact text: all 19 digits, as JSON integers (a JSON.parse would round them).
    expect(await read.clone().text()).toBe(stored);
    await expectDocumentedResponse(read, 'getPlant');

    const deleted = await fetch(`${api.url}/plants/9223372036854775807`, {
      method: 'DELETE',
      headers,
    });
    expect(deleted.status).toBe(204);
    await expectDocumentedResponse(deleted, 'deletePlant');
    const gone = await fetch(`${api.url}/plants/9223372036854775807`, { headers });
    expect(gone.status).toBe(404);
    expect(await expectDocumentedResponse(gone, 'getPlant')).toEqual({
      error: 40401,
      message: 'No plant with this id.',
    });
  });

  it('pages by following the Link header as it is, every plant once', async () => {
    const token = api.signToken();
    const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
    for (let id = 100; id < 125; id++) {
      const response = await fetch(`${api.url}/plants`, {
        method: 'POST',
        headers,
        body: `{"id":${id},"name":"Plant ${id}"}`,
      });
      expect(response.status).toBe(200);
    }
    const seen: number[] = [];
    let url: string | undefined = `${api.url}/plants?limit=4`;
    while (url !== undefined) {
      const response: Response = await fetch(url, { headers });
      expect(response.status).toBe(200);
      const link = response.headers.get('link');
      const page = (await expectDocumentedResponse(response, 'listPlants')) as { id: number }[];
      seen.push(...page.map((plant) => plant.id));
      url = link === null ? undefined : /^<([^>]+)>; rel="next"$/.exec(link)?.[1];
      if (link !== null) expect(url?.startsWith(`${api.url}/plants?limit=4&cursor=`)).toBe(true);
    }
    const expected = [1, ...Array.from({ length: 25 }, (_, index) => 100 + index)];
    expect(seen.sort((a, b) => a - b)).toEqual(expected);
  });

  it('answers invalid parameters 400/40005 naming them, as documented', async () => {
    const headers = { Authorization: `Bearer ${api.signToken()}` };
    for (const [path, operation, name] of [
      ['/plants?limit=0', 'listPlants', 'limit'],
      ['/plants?cursor=%00', 'listPlants', 'cursor'],
      ['/plants/one', 'getPlant', 'id'],
    ] as const) {
      const response = await fetch(`${api.url}${path}`, { headers });
      const body = (await expectDocumentedResponse(response, operation)) as { message: string };
      expect(response.status).toBe(400);
      expect(body.message).toContain(name);
    }
  });
});
