/**
 * New-plant webhooks through the local API as subscribers see them: DynamoDB Local's stream,
 * the deployed fan-out and delivery handlers on in-process queues, and real receivers on 127.0.0.1 that verify every signature with the Standard
 * Webhooks library. The retry schedule is shortened (it is data); the product's is in
 * `functions/shared/webhooks/send-webhook.ts`.
 *
 * @services dynamodb-local
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { startWebhookReceiver, type WebhookReceiver } from '../../beds/webhook-receiver.ts';
import { createLogger } from '../../functions/shared/platform/logger.ts';
import { webhookLog } from '../../functions/shared/webhooks/send-webhook.ts';
import { startDynamoDbLocal } from '../../local/dynamodb-local.ts';
import { type LocalApi, startLocalApi } from '../../local/local-api.ts';
import { startLocalWebhooks } from '../../local/local-webhooks.ts';
import { createTestTable, testStoreUrl } from '../support/test-store.ts';

const secret = `whsec_${randomBytes(32).toString('base64')}`;
let keysDirectory: string;
const started: { stop(): Promise<void> }[] = [];
let tableCounter = 0;

async function startApi(
  receivers: readonly WebhookReceiver[],
  options: {
    retrySchedule?: number[];
    timeoutMilliseconds?: number;
    dynamoDbUrl?: string;
    refuseSends?: () => boolean;
    webhookDataDirectory?: string;
    logLines?: (line: string) => void;
  } = {},
): Promise<LocalApi> {
  const {
    dynamoDbUrl = testStoreUrl(),
    webhookDataDirectory,
    logLines,
    ...webhookOptions
  } = options;
  tableCounter += 1;
  const api = await startLocalApi({
    port: 0,
    dynamoDbUrl,
    tableName: `plants-webhooks-${process.pid}-${Date.now()}-${tableCounter}`,
    keysDirectory,
    throttlingStage: 'off',
    logger: createLogger({}, logLines ?? (() => {})),
    ...(webhookDataDirectory === undefined ? {} : { webhookDataDirectory }),
    webhooks: {
      subscribers: receivers.map((receiver, index) => ({
        name: `receiver-${index + 1}`,
        url: receiver.url,
        secret,
      })),
      ...webhookOptions,
    },
  });
  started.push(api);
  return api;
}

async function startReceiver(): Promise<WebhookReceiver> {
  const receiver = await startWebhookReceiver(secret);
  started.push(receiver);
  return receiver;
}

function send(api: LocalApi, method: string, path: string, body?: string): Promise<Response> {
  return fetch(`${api.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${api.signToken()}`, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body }),
  });
}

beforeAll(async () => {
  keysDirectory = await mkdtemp(join(tmpdir(), 'plant-store-webhook-keys-'));
});

afterEach(async () => {
  // Always stopped, in reverse, even when a test failed.
  for (const item of started.splice(0).reverse()) await item.stop();
});

afterAll(async () => {
  await rm(keysDirectory, { recursive: true, force: true });
});

describe('new-plant webhooks', () => {
  it('POSTs each new plant once, signed, with the exact StoredPlant body; repeats and conflicts send nothing', async () => {
    const receiver = await startReceiver();
    const api = await startApi([receiver]);
    const bodies = [
      '{"id":9223372036854775807,"name":"Max","tag":"edge"}',
      '{"id":-9223372036854775808,"name":"Min"}',
      '{"id":7e0,"name":"Seven","ignored":true}',
    ];
    for (const body of bodies) expect((await send(api, 'POST', '/plants', body)).status).toBe(200);
    // An identical repeat and a conflict store nothing new: no event.
    expect((await send(api, 'POST', '/plants', bodies[1])).status).toBe(200);
    expect((await send(api, 'POST', '/plants', '{"id":7,"name":"Other"}')).status).toBe(400);

    await receiver.waitForAccepted(3);
    await new Promise((resolve) => setTimeout(resolve, 500)); // nothing more may come
    expect(receiver.deliveries).toHaveLength(3);
    expect(receiver.deliveries.map((delivery) => delivery.body).sort()).toEqual(
      [
        '{"id":9223372036854775807,"name":"Max","tag":"edge"}',
        '{"id":-9223372036854775808,"name":"Min"}',
        '{"id":7,"name":"Seven"}',
      ].sort(),
    );
    for (const delivery of receiver.deliveries) {
      expect(delivery).toMatchObject({ verified: true, contentType: 'application/json' });
      expect(delivery.webhookId).toMatch(/^msg_/);
    }
    expect(new Set(receiver.deliveries.map((delivery) => delivery.webhookId)).size).toBe(3);
  });

  it('sends a re-create after a delete as a new event', async () => {
    const receiver = await startReceiver();
    const api = await startApi([receiver]);
    expect((await send(api, 'POST', '/plants', '{"id":1,"name":"Fern"}')).status).toBe(200);
    await receiver.waitForAccepted(1);
    expect((await send(api, 'DELETE', '/plants/1')).status).toBe(204);
    expect((await send(api, 'POST', '/plants', '{"id":1,"name":"Fern"}')).status).toBe(200);
    await receiver.waitForAccepted(2);
    const [first, second] = receiver.deliveries;
    expect(first?.body).toBe(second?.body);
    expect(first?.webhookId).not.toBe(second?.webhookId);
  });

  it('keeps retrying through 500s, hangs past the timeout and refused connections, losing nothing; duplicates only as retries of one webhook-id', async () => {
    const receiver = await startReceiver();
    const api = await startApi([receiver], {
      retrySchedule: [0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3],
      timeoutMilliseconds: 300,
    });
    const create = (id: number) => send(api, 'POST', '/plants', `{"id":${id},"name":"P${id}"}`);

    receiver.setMode('fail');
    for (let id = 1; id <= 5; id++) expect((await create(id)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 400));
    receiver.setMode('hang');
    for (let id = 6; id <= 10; id++) expect((await create(id)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 700));
    await receiver.stop(); // connections refused
    for (let id = 11; id <= 15; id++) expect((await create(id)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 700));
    receiver.setMode('ok');
    await receiver.start();

    await receiver.waitForAccepted(15);
    const accepted = [...receiver.accepted().values()];
    expect(accepted.map((delivery) => JSON.parse(delivery.body).id).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 15 }, (_, index) => index + 1),
    );
    expect(accepted.every((delivery) => delivery.verified)).toBe(true);
    // Every request for one plant carried that plant's one webhook-id.
    const idsByPlant = new Map<number, Set<string>>();
    for (const delivery of receiver.deliveries) {
      const plant = JSON.parse(delivery.body).id as number;
      idsByPlant.set(plant, (idsByPlant.get(plant) ?? new Set()).add(delivery.webhookId));
    }
    for (const ids of idsByPlant.values()) expect(ids.size).toBe(1);
    expect(
      receiver.deliveries.filter((delivery) => delivery.answered !== 'ok').length,
    ).toBeGreaterThan(0);
    expect(api.webhooks?.deadLetters()).toEqual([]);
  }, 180_000);

  it('delivers to a live subscriber on time while another is dead', async () => {
    const live = await startReceiver();
    const dead = await startReceiver();
    await dead.stop();
    // The dead one's first retry is a minute on: a live delivery held back behind it would come
    // a minute late, one that is not comes in about a second (half a minute allows a busy machine).
    const api = await startApi([dead, live], { retrySchedule: [60, 60] });
    const sentAt = new Map<number, number>();
    for (let id = 1; id <= 20; id++) {
      sentAt.set(id, Date.now());
      expect((await send(api, 'POST', '/plants', `{"id":${id},"name":"P${id}"}`)).status).toBe(200);
    }
    await live.waitForAccepted(20);
    // Not held back behind the dead one: each arrived long before the dead one's first retry.
    for (const delivery of live.accepted().values()) {
      const id = JSON.parse(delivery.body).id as number;
      expect(delivery.receivedAt - (sentAt.get(id) ?? 0)).toBeLessThan(30_000);
    }
    expect(dead.deliveries).toHaveLength(0);
  });

  it('dead-letters a delivery after the last retry, keeping its last failure, and redrives it', async () => {
    const receiver = await startReceiver();
    const api = await startApi([receiver], { retrySchedule: [0.1, 0.1] });
    receiver.setMode('fail');
    expect((await send(api, 'POST', '/plants', '{"id":42,"name":"Lost?"}')).status).toBe(200);
    // Three attempts 0.1 s apart: seconds, but a busy machine may take many.
    const deadline = Date.now() + 30_000;
    while ((api.webhooks?.deadLetters().length ?? 0) === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(api.webhooks?.deadLetters()).toEqual([
      expect.objectContaining({
        subscriber: 'receiver-1',
        attempts: 3,
        lastFailure: 'answered HTTP 500',
        event: expect.objectContaining({ payload: '{"id":42,"name":"Lost?"}' }),
      }),
    ]);
    expect(receiver.deliveries).toHaveLength(3);

    receiver.setMode('ok');
    await expect(api.webhooks.redriveDeadLetters()).resolves.toBe(1);
    await receiver.waitForAccepted(1);
    expect(api.webhooks?.deadLetters()).toEqual([]);
    expect(new Set(receiver.deliveries.map((delivery) => delivery.webhookId)).size).toBe(1);
  });

  it('keeps a waiting retry across a restart of the local API (its queues are saved and taken up)', async () => {
    const webhookDataDirectory = await mkdtemp(join(tmpdir(), 'plant-store-webhook-queues-'));
    started.push({ stop: () => rm(webhookDataDirectory, { recursive: true, force: true }) });
    const receiver = await startReceiver();
    const tableName = `plants-restart-${process.pid}-${Date.now()}`;
    const start = () =>
      startLocalApi({
        port: 0,
        dynamoDbUrl: testStoreUrl(),
        tableName,
        keysDirectory,
        throttlingStage: 'off',
        logger: createLogger({}, () => {}),
        webhookDataDirectory,
        webhooks: {
          subscribers: [{ name: 'receiver', url: receiver.url, secret }],
          retrySchedule: [2],
        },
      });
    receiver.setMode('fail');
    const first = await start();
    expect((await send(first, 'POST', '/plants', '{"id":7,"name":"Kept"}')).status).toBe(200);
    const deadline = Date.now() + 10_000;
    while (receiver.deliveries.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await first.stop();
    receiver.setMode('ok');
    const second = await start();
    started.push(second);
    await receiver.waitForAccepted(1);
    expect(receiver.deliveries.map((delivery) => delivery.answered)).toEqual(['fail', 'ok']);
    expect(new Set(receiver.deliveries.map((delivery) => delivery.webhookId)).size).toBe(1);
  });

  it('keeps delivering after its store stops and comes back, losing nothing acknowledged', async () => {
    const dataDirectory = await mkdtemp(join(tmpdir(), 'plant-store-webhook-store-'));
    let store = await startDynamoDbLocal({ dataDirectory });
    const port = store.port;
    started.push(
      { stop: () => store.stop() },
      { stop: () => rm(dataDirectory, { recursive: true, force: true }) },
    );
    const receiver = await startReceiver();
    const api = await startApi([receiver], { dynamoDbUrl: store.url });
    const create = async (id: number) =>
      (await send(api, 'POST', '/plants', `{"id":${id},"name":"P${id}"}`)).status;
    for (let id = 1; id <= 3; id++) expect(await create(id)).toBe(200);
    await receiver.waitForAccepted(3);

    await store.stop(); // the stream's reads now fail
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    store = await startDynamoDbLocal({ dataDirectory, port });
    for (let id = 4; id <= 6; id++) {
      // The API's client may need a moment to reconnect: a 503 is a safe retry.
      let status = await create(id);
      for (let attempt = 0; status === 503 && attempt < 20; attempt++) status = await create(id);
      expect(status).toBe(200);
    }
    await receiver.waitForAccepted(6);
    expect(
      [...receiver.accepted().values()].map((delivery) => JSON.parse(delivery.body).id).sort(),
    ).toEqual([1, 2, 3, 4, 5, 6]);
  }, 180_000);

  it('stops while its store is paused: the reading at the stop gives up in a few seconds', async () => {
    const store = await startDynamoDbLocal({});
    started.push({
      stop: async () => {
        process.kill(store.pid, 'SIGCONT');
        await store.stop();
      },
    });
    const receiver = await startReceiver();
    const api = await startApi([receiver], { dynamoDbUrl: store.url });
    expect((await send(api, 'POST', '/plants', '{"id":1,"name":"Before"}')).status).toBe(200);
    await receiver.waitForAccepted(1);
    process.kill(store.pid, 'SIGSTOP');
    // Without a bound, the stream's reading at the stop waited for the paused store forever.
    await api.stop();
  }, 180_000);

  it('sends a plant stored the moment the webhooks have started', async () => {
    const receiver = await startReceiver();
    const table = await createTestTable();
    started.push({ stop: () => table.remove() });
    for (let round = 1; round <= 10; round++) {
      const webhooks = await startLocalWebhooks({
        storeUrl: table.url,
        documentClient: table.documentClient,
        tableName: table.tableName,
        subscribers: [{ name: 'receiver', url: receiver.url, secret }],
        logger: createLogger({}, () => {}),
      });
      try {
        // No wait at all: the stream position must already be held.
        await table.documentClient.send(
          new PutCommand({ TableName: table.tableName, Item: { id: BigInt(round), name: 'Now' } }),
        );
        await receiver.waitForAccepted(round);
      } finally {
        await webhooks.stop();
      }
    }
  });

  it('hands on at its stop a plant stored the moment before, sent at the next start, 10 times in 10', async () => {
    const receiver = await startReceiver();
    const table = await createTestTable();
    const dataDirectory = await mkdtemp(join(tmpdir(), 'plant-store-webhook-stop-'));
    started.push(
      { stop: () => table.remove() },
      { stop: () => rm(dataDirectory, { recursive: true, force: true }) },
    );
    const start = () =>
      startLocalWebhooks({
        storeUrl: table.url,
        documentClient: table.documentClient,
        tableName: table.tableName,
        subscribers: [{ name: 'receiver', url: receiver.url, secret }],
        logger: createLogger({}, () => {}),
        dataDirectory,
        // No read of the stream after the first: only the stop's own reading can hand it on.
        pollIntervalMilliseconds: 60_000,
      });
    let webhooks = await start();
    try {
      for (let round = 1; round <= 10; round++) {
        await table.documentClient.send(
          new PutCommand({ TableName: table.tableName, Item: { id: BigInt(round), name: 'Late' } }),
        );
        await webhooks.stop();
        webhooks = await start();
        await receiver.waitForAccepted(round);
      }
    } finally {
      await webhooks.stop();
    }
  });

  it('replays a stream batch set aside after its retries on its own, until every plant is delivered', async () => {
    const receiver = await startReceiver();
    const kept = await mkdtemp(join(tmpdir(), 'plant-store-kept-'));
    // Removed once the API has stopped (and saved its queues there).
    started.push({ stop: () => rm(kept, { recursive: true, force: true }) });
    let refusing = true;
    const api = await startApi([receiver], {
      webhookDataDirectory: kept,
      // The queue refuses every send: the fan-out fails its batch until Lambda would give up.
      refuseSends: () => refusing,
    });
    {
      for (let id = 1; id <= 5; id++) {
        expect((await send(api, 'POST', '/plants', `{"id":${id},"name":"P${id}"}`)).status).toBe(
          200,
        );
      }
      const folder = join(kept, 'stream-failures');
      const keptFiles = () => (existsSync(folder) ? readdirSync(folder) : []);
      while (keptFiles().length === 0) await new Promise((resolve) => setTimeout(resolve, 200));
      expect(receiver.deliveries).toHaveLength(0);
      // The queue is back; nobody acts.
      refusing = false;
      await receiver.waitForAccepted(5);
      expect(new Set([...receiver.accepted().keys()]).size).toBe(5);
      while (keptFiles().length > 0) await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }, 300_000);

  it('delivers 1,000 creates from 20 clients as 1,000 distinct, verified webhooks, a repeat only after a failed attempt', async () => {
    const receiver = await startReceiver();
    // The attempts the sender saw fail, by webhook-id, and why.
    const failedAttempts = new Map<string, string>();
    const logLines = (line: string) => {
      const { message, webhookId, failure } = JSON.parse(line);
      if (message === webhookLog.retrying) failedAttempts.set(webhookId, failure);
    };
    const api = await startApi([receiver], { logLines });
    let next = 0;
    const client = async () => {
      while (next < 1_000) {
        next += 1;
        const id = next;
        // A busy store may answer 503: retried after Retry-After, as the contract tells clients.
        let response = await send(api, 'POST', '/plants', `{"id":${id},"name":"P${id}"}`);
        for (let retry = 0; response.status === 503 && retry < 20; retry += 1) {
          await new Promise((resolve) => setTimeout(resolve, 1_000));
          response = await send(api, 'POST', '/plants', `{"id":${id},"name":"P${id}"}`);
        }
        expect(response.status).toBe(200);
      }
    };
    await Promise.all(Array.from({ length: 20 }, client));
    await receiver.waitForAccepted(1_000);
    const byId = receiver.accepted();
    const accepted = [...byId.values()];
    expect(new Set(accepted.map((delivery) => JSON.parse(delivery.body).id)).size).toBe(1_000);
    expect(accepted.every((delivery) => delivery.verified)).toBe(true);
    // At least once, as the contract says: a repeat is its event again, under the same
    // webhook-id, verified, and only after an attempt the sender saw fail (a loaded machine can
    // answer after the 10 s timeout). A bundle or a stream batch sent again would repeat events
    // with no failed attempt.
    const repeated = receiver.deliveries.filter((delivery, index) => {
      const first = receiver.deliveries.findIndex(
        (other) => other.webhookId === delivery.webhookId,
      );
      return first !== index;
    });
    const reasons = [
      ...new Set(repeated.map((delivery) => failedAttempts.get(delivery.webhookId))),
    ];
    console.info(`1,000 creates: ${repeated.length} repeats, after: ${reasons.join('; ') || '-'}`);
    for (const delivery of receiver.deliveries) {
      expect([delivery.verified, delivery.body]).toEqual([
        true,
        byId.get(delivery.webhookId)?.body,
      ]);
    }
    const unexplained = repeated.filter((delivery) => !failedAttempts.has(delivery.webhookId));
    expect(unexplained.map((delivery) => delivery.webhookId)).toEqual([]);
  }, 300_000);
});
