/**
 * Each client's API key, added to the stage's usage plan on first sight, against moto's API
 * Gateway: one key per client however many containers race to add it, and a failure that is
 * forgotten, so the next request tries again; a control plane that hangs is given up in time.
 */

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  APIGatewayClient,
  CreateRestApiCommand,
  CreateUsagePlanCommand,
  GetApiKeysCommand,
  GetUsagePlanKeysCommand,
} from '@aws-sdk/client-api-gateway';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { type MotoServer, startMotoServer } from '../../../beds/moto-server.ts';
import {
  apiGatewayControlPlane,
  bucketKeyValue,
  type ControlPlane,
  clientKeyValue,
  createClientKeyRegistry,
} from '../../../functions/authorizer/client-keys.ts';
import { authorizerMarginMilliseconds } from '../../../functions/authorizer/create-handler.ts';
import { withinInvocationBudget } from '../../../functions/shared/platform/invocation-budget.ts';

let moto: MotoServer;
let apiGateway: APIGatewayClient;
/** The authorizer's own signed calls, against moto. */
let controlPlane: ControlPlane;

beforeAll(async () => {
  moto = await startMotoServer();
  apiGateway = new APIGatewayClient({
    endpoint: moto.url,
    region: moto.region,
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
  });
  controlPlane = apiGatewayControlPlane({
    region: moto.region,
    endpoint: moto.url,
    credentials: () => ({ accessKeyId: 'testing', secretAccessKey: 'testing' }),
  });
}, 180_000);

afterAll(async () => {
  apiGateway?.destroy();
  await moto?.stop();
});

async function plan(name: string): Promise<string> {
  await apiGateway.send(new CreateRestApiCommand({ name: `${name}-api` }));
  const { id } = await apiGateway.send(new CreateUsagePlanCommand({ name }));
  return id as string;
}

it('adds each client’s key once, however many containers race to add it', async () => {
  const planId = await plan('plant-store-race-clients');
  // Three containers, each seeing the same four clients ten times at once.
  const containers = [1, 2, 3].map(() =>
    createClientKeyRegistry(controlPlane, 'plant-store-race-clients'),
  );
  const clients = ['a', 'b', 'c', 'd'].map((client) =>
    clientKeyValue('plant-store-race-clients', `https://issuer.example ${client}`),
  );
  await Promise.all(
    containers.flatMap((register) =>
      clients.flatMap((value) => Array.from({ length: 10 }, () => register(value, 'no-bucket'))),
    ),
  );

  const { items: planKeys = [] } = await apiGateway.send(
    new GetUsagePlanKeysCommand({ usagePlanId: planId }),
  );
  expect(planKeys.map((key) => key.value).sort()).toEqual([...clients].sort());
  for (const value of clients) {
    const { items = [] } = await apiGateway.send(
      new GetApiKeysCommand({ nameQuery: value, includeValues: true }),
    );
    expect(items.filter((key) => key.name === value)).toHaveLength(1);
  }
});

it('asks a fresh container only for the plan and its keys, whatever the number of clients already in it', async () => {
  const planId = await plan('plant-store-known-clients');
  const clients = Array.from({ length: 30 }, (_, index) =>
    clientKeyValue('plant-store-known-clients', `https://issuer.example known-${index}`),
  );
  await Promise.all(
    clients.map((value) =>
      createClientKeyRegistry(controlPlane, 'plant-store-known-clients')(value, 'no-bucket'),
    ),
  );
  // After a deploy: every authorizer container is new, and every client is in the plan already.
  const calls: string[] = [];
  const counted: ControlPlane = (method, path, options) => {
    calls.push(`${method} ${path.replace(planId, '{id}')}`);
    return controlPlane(method, path, options);
  };
  const containers = [1, 2, 3].map(() =>
    createClientKeyRegistry(counted, 'plant-store-known-clients'),
  );
  await Promise.all(
    containers.flatMap((register) => clients.map((value) => register(value, 'no-bucket'))),
  );
  expect(calls.sort()).toEqual(
    [1, 2, 3].flatMap(() => ['GET /usageplans', 'GET /usageplans/{id}/keys']).sort(),
  );
  // A client new to the plan still costs its own calls, once in a container.
  const register = containers[0] as (value: string, bucket: string) => Promise<string>;
  const newcomer = clientKeyValue('plant-store-known-clients', 'https://issuer.example new');
  calls.length = 0;
  await Promise.all([register(newcomer, 'no-bucket'), register(newcomer, 'no-bucket')]);
  expect(calls.sort()).toEqual(['GET /apikeys', 'POST /apikeys', 'POST /usageplans/{id}/keys']);
});

it('counts a client past the cap in its hashed bucket for good, the same bucket in every container', async () => {
  const name = 'plant-store-capped-clients';
  const planId = await plan(name);
  const clientOf = (index: number) => `https://issuer.example capped-${index}`;
  const keyOf = (index: number) => clientKeyValue(name, clientOf(index));
  const register = createClientKeyRegistry(controlPlane, name, { cap: 3 });
  for (const index of [1, 2, 3]) {
    expect(await register(keyOf(index), bucketKeyValue(name, clientOf(index)))).toBe(keyOf(index));
  }
  const late = bucketKeyValue(name, clientOf(4));
  expect(await register(keyOf(4), late)).toBe(late);
  // Another container, after a deploy: the same bucket, and no call but the listing.
  const calls: string[] = [];
  const fresh = createClientKeyRegistry(
    (method, path, options) => {
      calls.push(`${method} ${path.replace(planId, '{id}')}`);
      return controlPlane(method, path, options);
    },
    name,
    { cap: 3 },
  );
  expect(await fresh(keyOf(4), late)).toBe(late);
  expect(await fresh(keyOf(1), bucketKeyValue(name, clientOf(1)))).toBe(keyOf(1));
  expect(calls.sort()).toEqual(['GET /usageplans', 'GET /usageplans/{id}/keys']);
  const { items = [] } = await apiGateway.send(
    new GetUsagePlanKeysCommand({ usagePlanId: planId }),
  );
  expect(items.map((key) => key.value).sort()).toEqual([keyOf(1), keyOf(2), keyOf(3), late].sort());
  // Buckets spread clients: 640 clients over the 64 buckets, none holding more than twice its share.
  const counts = new Map<string, number>();
  for (let index = 0; index < 640; index += 1) {
    const bucket = bucketKeyValue(name, clientOf(index));
    counts.set(bucket, (counts.get(bucket) ?? 0) + 1);
  }
  expect(counts.size).toBe(64);
  expect(Math.max(...counts.values())).toBeLessThanOrEqual(20);
});

it('tells a failed registration to its caller and tries again on the next request', async () => {
  const register = createClientKeyRegistry(controlPlane, 'plant-store-later-clients');
  const value = clientKeyValue('plant-store-later-clients', 'https://issuer.example late');
  // The plan does not exist yet: the registration fails, and is not remembered as done.
  await expect(register(value, 'no-bucket')).rejects.toThrow(
    'No usage plan named plant-store-later-clients',
  );
  const planId = await plan('plant-store-later-clients');
  await register(value, 'no-bucket');

  const { items = [] } = await apiGateway.send(
    new GetUsagePlanKeysCommand({ usagePlanId: planId }),
  );
  expect(items.map((key) => key.value)).toEqual([value]);
});

it('derives one key per client and plan, the same from every token of the client', () => {
  const value = clientKeyValue('plant-store-dev-clients', 'https://issuer.example a');
  expect(value).toMatch(/^[\w-]{43}$/);
  expect(clientKeyValue('plant-store-dev-clients', 'https://issuer.example a')).toBe(value);
  expect(clientKeyValue('plant-store-prod-clients', 'https://issuer.example a')).not.toBe(value);
  expect(clientKeyValue('plant-store-dev-clients', 'https://issuer.example b')).not.toBe(value);
});

it('answers within the invocation’s time when the control plane hangs, counting the client as the shared one', async () => {
  // A control plane that takes every connection and never answers.
  const hanging = createServer(() => {});
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
  try {
    const register = createClientKeyRegistry(
      apiGatewayControlPlane({
        region: moto.region,
        endpoint: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`,
        credentials: () => ({ accessKeyId: 'testing', secretAccessKey: 'testing' }),
      }),
      'plant-store-hanging',
    );
    // 1.2 s left: less than one call's own 1.5 s timeout, let alone the four a registration may make.
    const deadline = Date.now() + 1_200;
    const left = () => deadline - Date.now();
    const registered = withinInvocationBudget(
      { getRemainingTimeInMillis: left },
      authorizerMarginMilliseconds,
      () =>
        register(clientKeyValue('plant-store-hanging', 'https://issuer.example hung'), 'no-bucket'),
    );
    await expect(registered).rejects.toThrow();
    // Given up with time to answer: the authorizer's margin still ahead of the deadline.
    expect(left()).toBeGreaterThan(0);
  } finally {
    hanging.closeAllConnections();
    hanging.close();
  }
});
