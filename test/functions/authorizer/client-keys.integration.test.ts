/**
 * Each client's API key, added to the stage's usage plan once for the stage, against moto's API
 * Gateway and the records in DynamoDB Local's webhook log table: one key per client however many
 * containers race to add it; after a deploy, no control-plane call for a client already in the
 * plan; at most one key added every 3 s; a failure left to a later request; a control plane that
 * hangs given up in time.
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
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { type MotoServer, startMotoServer } from '../../../beds/moto-server.ts';
import {
  apiGatewayControlPlane,
  bucketKeyValue,
  type ControlPlane,
  clientKeyValue,
  createClientKeyRegistry,
  dynamoDbKeyRecords,
  registrationSpacingMilliseconds,
  sharedClient,
  staleClaimMilliseconds,
} from '../../../functions/authorizer/client-keys.ts';
import { authorizerMarginMilliseconds } from '../../../functions/authorizer/create-handler.ts';
import { withinInvocationBudget } from '../../../functions/shared/platform/invocation-budget.ts';
import { webhookLogTableSchema } from '../../../infra/table-schemas.ts';
import { type DynamoDbLocal, startDynamoDbLocal } from '../../../local/dynamodb-local.ts';
import { createTableIfMissing } from '../../../local/tables.ts';

const credentials = { accessKeyId: 'testing', secretAccessKey: 'testing' };
let moto: MotoServer;
let store: DynamoDbLocal;
let apiGateway: APIGatewayClient;
/** The authorizer's own signed calls, against moto. */
let controlPlane: ControlPlane;

beforeAll(async () => {
  [moto, store] = await Promise.all([startMotoServer(), startDynamoDbLocal()]);
  apiGateway = new APIGatewayClient({ endpoint: moto.url, region: moto.region, credentials });
  // A busy machine's moto and store may take longer than the authorizer's 1.5 s a call: the
  // timeouts are the hanging control plane's test's.
  controlPlane = apiGatewayControlPlane({
    region: moto.region,
    endpoint: moto.url,
    credentials: () => credentials,
    timeoutMilliseconds: 15_000,
  });
}, 180_000);

afterAll(async () => {
  apiGateway?.destroy();
  await Promise.all([moto?.stop(), store?.stop()]);
});

/** A stage's records in a webhook log table of its own; `spacing` 0 lets races run unpaced. */
async function recordsOf(name: string, options: { spacing?: number; now?: () => number } = {}) {
  const client = new DynamoDBClient({ endpoint: store.url, region: 'us-east-1', credentials });
  await createTableIfMissing(client, `${name}-log`, webhookLogTableSchema);
  client.destroy();
  return () =>
    dynamoDbKeyRecords(
      {
        region: 'us-east-1',
        endpoint: store.url,
        credentials: () => credentials,
        timeoutMilliseconds: 15_000,
      },
      `${name}-log`,
      { spacingMilliseconds: options.spacing ?? 0, ...(options.now ? { now: options.now } : {}) },
    );
}

/** A control plane that counts its calls, the plan's id written `{id}`. */
function counting(planId: () => string) {
  const calls: string[] = [];
  const counted: ControlPlane = (method, path, options) => {
    calls.push(`${method} ${path.replace(planId(), '{id}')}`);
    return controlPlane(method, path, options);
  };
  return { calls, counted };
}

async function plan(name: string): Promise<string> {
  await apiGateway.send(new CreateRestApiCommand({ name: `${name}-api` }));
  const { id } = await apiGateway.send(new CreateUsagePlanCommand({ name }));
  return id as string;
}

async function planKeyValues(planId: string): Promise<string[]> {
  const { items = [] } = await apiGateway.send(
    new GetUsagePlanKeysCommand({ usagePlanId: planId }),
  );
  return items.map((key) => key.value as string).sort();
}

it('adds each client’s key once, however many containers race to add it', async () => {
  const name = 'plant-store-race-clients';
  const planId = await plan(name);
  const records = await recordsOf(name);
  // Three containers, each seeing the same four clients ten times at once.
  const containers = [1, 2, 3].map(() => createClientKeyRegistry(controlPlane, records(), name));
  const clients = ['a', 'b', 'c', 'd'].map((client) => `https://issuer.example ${client}`);
  const values = clients.map((client) => clientKeyValue(name, client));
  const buckets = clients.map((client) => bucketKeyValue(name, client));
  const shared = clientKeyValue(name, sharedClient);
  const round = () =>
    Promise.all(
      containers.flatMap((register) =>
        values.flatMap((value, index) =>
          Array.from({ length: 10 }, async () => [
            index,
            await register(value, buckets[index] as string),
          ]),
        ),
      ),
    );
  // While another container adds a client's key (or a transaction on the stage's count lost a
  // race), the client is counted in its bucket, or as the shared client while the bucket's key is
  // being added too; a later request tries again.
  let rounds = 0;
  let own = false;
  for (; !own && rounds < 10; rounds += 1) {
    const answers = await round();
    for (const [index, answer] of answers) {
      expect([values[index as number], buckets[index as number], shared]).toContain(answer);
    }
    own = answers.every(([index, answer]) => answer === values[index as number]);
  }
  expect(own).toBe(true);
  const keys = await planKeyValues(planId);
  expect(keys.filter((key) => !buckets.includes(key))).toEqual([...values].sort());
  for (const value of [...new Set(keys)]) {
    const { items = [] } = await apiGateway.send(
      new GetApiKeysCommand({ nameQuery: value, includeValues: true }),
    );
    expect(items.filter((key) => key.name === value)).toHaveLength(1);
  }
});

it('costs a client at most two control-plane calls in all, and a container after a deploy none for the clients in the plan', async () => {
  const name = 'plant-store-known-clients';
  const planId = await plan(name);
  const records = await recordsOf(name);
  const { calls, counted } = counting(() => planId);
  const clients = Array.from({ length: 30 }, (_, index) =>
    clientKeyValue(name, `https://issuer.example known-${index}`),
  );
  // Three containers meet the new clients, each client in every container.
  const first = [1, 2, 3].map(() => createClientKeyRegistry(counted, records(), name));
  for (const register of first) {
    for (const value of clients) await register(value, 'no-bucket');
  }
  const perClient = calls.filter((call) => call !== 'GET /usageplans');
  expect(perClient.sort()).toEqual(
    clients.flatMap(() => ['POST /apikeys', 'POST /usageplans/{id}/keys']).sort(),
  );
  // The plan is looked up once in a container that adds a key.
  expect(calls.filter((call) => call === 'GET /usageplans').length).toBeLessThanOrEqual(1);
  expect(await planKeyValues(planId)).toEqual([...clients].sort());
  // After a deploy: every container is new, every client in the plan, no control-plane call.
  calls.length = 0;
  const fresh = [1, 2, 3].map(() => createClientKeyRegistry(counted, records(), name));
  const answers = await Promise.all(
    fresh.flatMap((register) => clients.map((value) => register(value, 'no-bucket'))),
  );
  expect(answers).toEqual(fresh.flatMap(() => clients));
  expect(calls).toEqual([]);
});

it('counts a client past the cap in its hashed bucket for good, the same bucket in every container', async () => {
  const name = 'plant-store-capped-clients';
  const planId = await plan(name);
  const records = await recordsOf(name);
  const clientOf = (index: number) => `https://issuer.example capped-${index}`;
  const keyOf = (index: number) => clientKeyValue(name, clientOf(index));
  const register = createClientKeyRegistry(controlPlane, records(), name, { cap: 3 });
  for (const index of [1, 2, 3]) {
    expect(await register(keyOf(index), bucketKeyValue(name, clientOf(index)))).toBe(keyOf(index));
  }
  const late = bucketKeyValue(name, clientOf(4));
  expect(await register(keyOf(4), late)).toBe(late);
  // Another container, after a deploy: the same bucket, and no control-plane call; once it has
  // learned the cap is reached, no read of that client's record either.
  const { calls, counted } = counting(() => planId);
  const read: string[] = [];
  const stored = records();
  const reading = {
    ...stored,
    read: (value: string) => {
      read.push(value);
      return stored.read(value);
    },
  };
  const fresh = createClientKeyRegistry(counted, reading, name, { cap: 3 });
  expect(await fresh(keyOf(4), late)).toBe(late);
  expect(await fresh(keyOf(4), late)).toBe(late);
  expect(read.filter((value) => value === keyOf(4))).toHaveLength(1);
  expect(await fresh(keyOf(1), bucketKeyValue(name, clientOf(1)))).toBe(keyOf(1));
  expect(calls).toEqual([]);
  expect(await planKeyValues(planId)).toEqual([keyOf(1), keyOf(2), keyOf(3), late].sort());
  // Buckets spread clients: 640 clients over the 64 buckets, none holding more than twice its share.
  const counts = new Map<string, number>();
  for (let index = 0; index < 640; index += 1) {
    const bucket = bucketKeyValue(name, clientOf(index));
    counts.set(bucket, (counts.get(bucket) ?? 0) + 1);
  }
  expect(counts.size).toBe(64);
  expect(Math.max(...counts.values())).toBeLessThanOrEqual(20);
});

it('adds one key every 3 s at most for the stage, counting those that wait as the shared client', async () => {
  const name = 'plant-store-paced-clients';
  const planId = await plan(name);
  let now = 1_000_000;
  const records = await recordsOf(name, {
    spacing: registrationSpacingMilliseconds,
    now: () => now,
  });
  const { calls, counted } = counting(() => planId);
  const containers = [1, 2].map(() =>
    createClientKeyRegistry(counted, records(), name, { now: () => now }),
  );
  const shared = clientKeyValue(name, sharedClient);
  const clients = ['p', 'q', 'r'].map((client) =>
    clientKeyValue(name, `https://issuer.example ${client}`),
  );
  const bucket = bucketKeyValue(name, 'https://issuer.example bucket');
  const answersAt = async () =>
    Promise.all(containers.flatMap((register) => clients.map((value) => register(value, bucket))));
  const rounds: string[][] = [];
  // Twelve seconds of requests from three new clients, a round a second.
  for (let second = 0; second < 12; second += 1) {
    rounds.push(await answersAt());
    now += 1_000;
  }
  // A key every 3 s at most (the clients', and perhaps their bucket's to count them meanwhile):
  // four in 12 s, two calls each, and a plan lookup a container, under a call a second.
  const keys = await planKeyValues(planId);
  expect(keys.filter((key) => key !== bucket)).toEqual([...clients].sort());
  expect(calls.filter((call) => call === 'POST /apikeys').length).toBeLessThanOrEqual(4);
  expect(calls.length).toBeLessThanOrEqual(12);
  // The first second, one key is there; by the last, every client has its own.
  expect(rounds[0]?.some((answer) => answer !== shared)).toBe(true);
  expect(rounds.at(-1)).toEqual(containers.flatMap(() => clients));
});

it('leaves a failed registration to a later request, once its claim has gone stale', async () => {
  const name = 'plant-store-later-clients';
  let now = 2_000_000;
  const records = await recordsOf(name, { now: () => now });
  const register = createClientKeyRegistry(controlPlane, records(), name, { now: () => now });
  const value = clientKeyValue(name, 'https://issuer.example late');
  const bucket = bucketKeyValue(name, 'https://issuer.example late');
  // The plan does not exist yet: the registration fails, and its claim holds a while, in which
  // the client is counted in its bucket.
  await expect(register(value, bucket)).rejects.toThrow(`No usage plan named ${name}`);
  const planId = await plan(name);
  expect(await register(value, bucket)).toBe(bucket);
  now += staleClaimMilliseconds + 1;
  expect(await register(value, bucket)).toBe(value);
  expect(await planKeyValues(planId)).toEqual([value, bucket].sort());
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
    const records = await recordsOf('plant-store-hanging');
    const register = createClientKeyRegistry(
      apiGatewayControlPlane({
        region: moto.region,
        endpoint: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`,
        credentials: () => credentials,
      }),
      records(),
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
