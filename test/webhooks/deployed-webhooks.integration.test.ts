/**
 * The deployed webhook path held to AWS's rules on emulators: the fan-out and delivery handlers,
 * unchanged, against DynamoDB Local's stream and moto's SQS, S3 and Secrets Manager, invoked by
 * imitations of Lambda's event source mappings, delivering to real receivers on 127.0.0.1 that
 * verify every signature with the Standard Webhooks library. The schedule is time-compressed.
 *
 * @services dynamodb-local
 */
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import {
  type BedSubscriber,
  type DeployedWebhooks,
  startDeployedWebhooks,
} from '../../beds/deployed-webhooks.ts';
import { type MotoServer, startMotoServer } from '../../beds/moto-server.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../beds/webhook-receiver.ts';
import { createPlant } from '../../functions/create-plant/create-plant.ts';
import { deletePlant } from '../../functions/delete-plant/delete-plant.ts';
import {
  createHandler as createReplayHandler,
  replayLog,
  setAsideAfterFailures,
} from '../../functions/replay-stream-failures/create-handler.ts';
import { errorCodes } from '../../functions/shared/errors/error-codes.ts';
import { ApiError } from '../../functions/shared/errors/errors.ts';
import { itemsNotPlantsLog } from '../../functions/shared/plants/stored-plant.ts';
import { createLogger } from '../../functions/shared/platform/logger.ts';
import { sqsDeliveryQueue } from '../../functions/shared/webhooks/delivery-queue.ts';
import { subscriptionOf } from '../../functions/shared/webhooks/plant-events.ts';
import { fanoutLog, fixedSubscriptions } from '../../functions/shared/webhooks/queue-deliveries.ts';
import { updatePlant } from '../../functions/update-plant/update-plant.ts';
import { testStoreUrl } from '../support/test-store.ts';

let moto: MotoServer;
const running: { stop(): Promise<void> }[] = [];

beforeAll(async () => {
  moto = await startMotoServer();
}, 180_000);

afterEach(async () => {
  for (const entry of running.splice(0).reverse()) await entry.stop();
});

afterAll(async () => {
  await moto?.stop();
});

async function bed(
  options: Omit<Parameters<typeof startDeployedWebhooks>[0], 'moto' | 'dynamoDbUrl'>,
) {
  const started = await startDeployedWebhooks({
    moto,
    dynamoDbUrl: testStoreUrl(),
    ...options,
  });
  running.push(started);
  return started;
}

/** Waits until `check` holds, polling; fails the test after `timeoutMilliseconds`. */
async function eventually(check: () => Promise<boolean> | boolean, timeoutMilliseconds = 20_000) {
  const deadline = Date.now() + timeoutMilliseconds;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** An item written as another tool would: again after a timeout, as a busy machine may need. */
async function putPlant(webhooks: DeployedWebhooks, item: Record<string, unknown>) {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await webhooks.table.documentClient.send(
        new PutCommand({ TableName: webhooks.table.tableName, Item: item }),
      );
    } catch (error) {
      if ((error as Error).name !== 'TimeoutError' || attempt === 5) throw error;
    }
  }
}

/** The bed's secret is made when it starts; receivers verify with it once it is known. */
async function bedWithReceivers(
  count: number,
  options: Partial<Parameters<typeof bed>[0]> = {},
  /** Each subscriber's format and events, by position; the plant format by default. */
  subscriptions: readonly Pick<BedSubscriber, 'format' | 'events'>[] = [],
) {
  // Receivers need the secret and the bed needs their URLs: start the receivers with a
  // placeholder port, then restart them with the secret on the same port.
  const placeholders = await Promise.all(
    Array.from({ length: count }, () => startWebhookReceiver(`whsec_${'A'.repeat(44)}`)),
  );
  const urls = placeholders.map((placeholder) => placeholder.url);
  await Promise.all(placeholders.map((placeholder) => placeholder.stop()));
  const webhooks = await bed({
    retrySchedule: [1, 2],
    subscribers: urls.map((url, index) => ({
      name: `subscriber-${index + 1}`,
      url,
      ...subscriptions[index],
    })),
    ...options,
  });
  const receivers = await Promise.all(
    urls.map(async (url) => {
      const started = await startWebhookReceiver(webhooks.secret, Number(new URL(url).port));
      running.push(started);
      return started;
    }),
  );
  return { webhooks, receivers };
}

/** A kept invocation record of one new plant, as Lambda writes it to the bucket. */
function keepBatch(bucket: string, id: number, name: string) {
  const payload = {
    Records: [
      {
        eventID: `kept-${id}`,
        eventName: 'INSERT',
        dynamodb: { NewImage: marshall({ id, name }) },
      },
    ],
  };
  return moto.s3.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: `aws/lambda/mapping/shard/2026-11-25T00:00:${id}.000Z-${id}`,
      Body: JSON.stringify({ payload: JSON.stringify(payload) }),
    }),
  );
}

describe('the deployed webhook path, on AWS emulators', () => {
  it('delivers each new plant once to every subscriber, exact and signed; an item that is not a plant is skipped and counted', async () => {
    const lines: Record<string, unknown>[] = [];
    const { webhooks, receivers } = await bedWithReceivers(2, {
      logger: createLogger({}, (line) => lines.push(JSON.parse(line))),
    });
    await putPlant(webhooks, { id: 9_223_372_036_854_775_807n, name: 'Max', tag: 'edge' });
    // Written by another tool: an id that is no int64 must not hold up the plants after it.
    await putPlant(webhooks, { id: 1.5, name: 'Not a plant' });
    await putPlant(webhooks, { id: -9_223_372_036_854_775_808n, name: 'Min' });
    for (const subscriber of receivers) await subscriber.waitForAccepted(2);
    for (const subscriber of receivers) {
      const bodies = [...subscriber.accepted().values()].map((delivery) => delivery.body).sort();
      expect(bodies).toEqual([
        '{"id":-9223372036854775808,"name":"Min"}',
        '{"id":9223372036854775807,"name":"Max","tag":"edge"}',
      ]);
      expect(subscriber.deliveries.every((delivery) => delivery.verified)).toBe(true);
      expect(subscriber.deliveries).toHaveLength(2);
    }
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        message: itemsNotPlantsLog.message,
        [itemsNotPlantsLog.countField]: 1,
      }),
    );
    expect(await webhooks.deadLetters()).toEqual([]);
  }, 180_000);

  it('sends changes and deletes, from MODIFY and REMOVE records, only to a subscriber of the event format that chose them', async () => {
    const { webhooks, receivers } = await bedWithReceivers(2, {}, [{}, { format: 'event' }]);
    const [plants, events] = receivers as [WebhookReceiver, WebhookReceiver];
    const store = webhooks.table;
    const id = 9_223_372_036_854_775_807n;
    const created = await createPlant({ id, name: 'Fern', tag: 'shade' }, store);
    const changed = await updatePlant(id, { tag: null }, { ifMatch: [created.version] }, store);
    // Nothing changes, nothing is written: no event.
    await updatePlant(id, { name: 'Fern' }, { ifMatch: 'any' }, store);
    await deletePlant(id, store);
    await events.waitForAccepted(3);
    await plants.waitForAccepted(1);
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // nothing more may come
    expect(plants.deliveries.map((delivery) => delivery.body)).toEqual([
      `{"id":${id},"name":"Fern","tag":"shade"}`,
    ]);
    const bodies = events.deliveries.map((delivery) => delivery.body);
    expect(bodies).toHaveLength(3);
    const byType = new Map(bodies.map((body) => [JSON.parse(body).type as string, body]));
    expect(byType.get('plant.created')).toContain(
      `"data":{"id":${id},"name":"Fern","tag":"shade","version":${created.version}}`,
    );
    expect(byType.get('plant.updated')).toContain(
      `"data":{"id":${id},"name":"Fern","version":${changed.version}}`,
    );
    expect(byType.get('plant.deleted')).toContain(
      `"data":{"id":${id},"version":${changed.version + 1}}`,
    );
    for (const receiver of receivers) {
      expect(receiver.deliveries.every((delivery) => delivery.verified)).toBe(true);
    }
    expect(await webhooks.deadLetters()).toEqual([]);
  }, 180_000);

  it('retries on schedule as delayed messages in hops, none of them in flight while it waits', async () => {
    const { webhooks, receivers } = await bedWithReceivers(1, {
      // 1 s, then 3 s in hops of at most 1 s: the 15 min hops of SQS, compressed.
      retrySchedule: [1, 3, 1],
      maximumDelaySeconds: 1,
    });
    const [subscriber] = receivers;
    if (subscriber === undefined) throw new Error('no receiver');
    subscriber.setMode('fail');
    await putPlant(webhooks, { id: 7n, name: 'Fern' });
    await eventually(() => subscriber.deliveries.length >= 2);
    // Waiting for the third attempt (3 s away): the retry is a delayed message, not in flight.
    const inFlight: number[] = [];
    while (subscriber.deliveries.length < 3) {
      inFlight.push(await webhooks.inFlight());
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    subscriber.setMode('ok');
    await subscriber.waitForAccepted(1);
    const times = subscriber.deliveries.map((delivery) => delivery.receivedAt);
    const gaps = times.slice(1).map((time, index) => (time - (times[index] ?? 0)) / 1000);
    // Each wait at least what the schedule says, and within SQS's whole-second delays and a
    // poll's latency of it.
    expect(gaps[0]).toBeGreaterThanOrEqual(1);
    expect(gaps[1]).toBeGreaterThanOrEqual(3);
    const schedule = [1, 3, 1];
    for (const [index, gap] of gaps.entries()) {
      expect(gap).toBeLessThan((schedule[index] ?? 0) + 2.5);
    }
    expect(Math.max(...inFlight)).toBeLessThanOrEqual(1);
    expect(inFlight.filter((count) => count === 0).length).toBeGreaterThan(inFlight.length / 2);
    expect(new Set(subscriber.deliveries.map((delivery) => delivery.webhookId)).size).toBe(1);
  }, 180_000);

  it('dead-letters after the last attempt with its last failure, and a redriven letter starts the schedule again', async () => {
    const { webhooks, receivers } = await bedWithReceivers(1, { retrySchedule: [1, 1] });
    const [subscriber] = receivers;
    if (subscriber === undefined) throw new Error('no receiver');
    subscriber.setMode('fail');
    await putPlant(webhooks, { id: 42n, name: 'Aloe' });
    let letters: Record<string, unknown>[] = [];
    await eventually(async () => {
      letters = await webhooks.deadLetters();
      return letters.length === 1;
    });
    expect(letters[0]).toMatchObject({
      payload: '{"id":42,"name":"Aloe"}',
      subscriber: 'subscriber-1',
      attempts: 3,
      lastFailure: 'answered HTTP 500',
    });
    expect(subscriber.deliveries).toHaveLength(3);
    // A redrive (`start-message-move-task`, which moto does not run) moves the body unchanged.
    subscriber.setMode('ok');
    await moto.sqs.send(
      new SendMessageCommand({
        QueueUrl: webhooks.deliveryQueueUrl,
        MessageBody: JSON.stringify(letters[0]),
      }),
    );
    await subscriber.waitForAccepted(1);
    expect(subscriber.deliveries).toHaveLength(4);
  }, 180_000);

  it('ends a message whose handling keeps failing in DeadLetters after the queue’s maxReceiveCount', async () => {
    // A secret that does not exist: every attempt fails before any POST.
    const broken = await bed({
      retrySchedule: [1],
      visibilityTimeoutSeconds: 1,
      subscribers: [
        {
          name: 'broken',
          url: 'http://127.0.0.1:9/',
          secretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:missing',
        },
      ],
    });
    await putPlant(broken, { id: 5n, name: 'Moss' });
    let letters: Record<string, unknown>[] = [];
    await eventually(async () => {
      letters = await broken.deadLetters();
      return letters.length === 1;
    }, 180_000);
    // The message itself, as SQS moved it: its first attempt, never made.
    expect(letters[0]).toMatchObject({ payload: '{"id":5,"name":"Moss"}', attempt: 1 });
  }, 180_000);

  it('keeps a stream batch the fan-out cannot queue, and one replay delivers it to every subscriber once', async () => {
    const { webhooks, receivers } = await bedWithReceivers(2, {
      // The fan-out's queue does not exist: SQS refuses every send, as in an outage.
      fanoutQueueUrl: `${moto.url}/123456789012/no-such-queue`,
    });
    await putPlant(webhooks, { id: 11n, name: 'Ivy' });
    await eventually(async () => {
      const { KeyCount = 0 } = await moto.s3.send(
        new ListObjectsV2Command({ Bucket: webhooks.bucket }),
      );
      return KeyCount === 1;
    }, 180_000);
    for (const subscriber of receivers) expect(subscriber.deliveries).toHaveLength(0);

    const replay = createReplayHandler({
      s3: moto.s3,
      bucketName: webhooks.bucket,
      deliveries: sqsDeliveryQueue(moto.sqs, webhooks.deliveryQueueUrl),
      subscriptions: fixedSubscriptions(
        ['subscriber-1', 'subscriber-2'].map((name) => subscriptionOf(name, {})),
      ),
      logger: createLogger({}, () => {}),
    });
    await expect(replay()).resolves.toEqual({
      replayedBatches: 1,
      newPlants: 1,
      remainingBatches: 0,
      oldestKeptMinutes: 0,
    });
    for (const subscriber of receivers) {
      await subscriber.waitForAccepted(1);
      expect(subscriber.deliveries.map((delivery) => delivery.body)).toEqual([
        '{"id":11,"name":"Ivy"}',
      ]);
    }
    const { KeyCount } = await moto.s3.send(new ListObjectsV2Command({ Bucket: webhooks.bucket }));
    expect(KeyCount).toBe(0);
    // Nothing left to replay: a second run is a no-op.
    await expect(replay()).resolves.toEqual({
      replayedBatches: 0,
      newPlants: 0,
      remainingBatches: 0,
      oldestKeptMinutes: 0,
    });
  }, 180_000);

  it('replays every page of kept batches the bucket lists', async () => {
    const { webhooks, receivers } = await bedWithReceivers(1);
    // Five kept invocation records, as Lambda writes them, listed two to a page.
    for (const id of [21, 22, 23, 24, 25]) await keepBatch(webhooks.bucket, id, 'Fern');
    const replay = createReplayHandler({
      s3: moto.s3,
      bucketName: webhooks.bucket,
      listPageSize: 2,
      deliveries: sqsDeliveryQueue(moto.sqs, webhooks.deliveryQueueUrl),
      subscriptions: fixedSubscriptions([subscriptionOf('subscriber-1', {})]),
      logger: createLogger({}, () => {}),
    });
    await expect(replay()).resolves.toEqual({
      replayedBatches: 5,
      newPlants: 5,
      remainingBatches: 0,
      oldestKeptMinutes: 0,
    });
    const [subscriber] = receivers;
    await subscriber?.waitForAccepted(5);
    expect(subscriber?.deliveries.map((delivery) => delivery.body).sort()).toEqual(
      [21, 22, 23, 24, 25].map((id) => `{"id":${id},"name":"Fern"}`),
    );
  }, 180_000);

  it('keeps a batch S3 fails on for the next run and replays the others; a failed listing logs no summary', async () => {
    const { webhooks, receivers } = await bedWithReceivers(1);
    for (const id of [31, 32, 33]) await keepBatch(webhooks.bucket, id, 'Sage');
    const keys = (
      await moto.s3.send(new ListObjectsV2Command({ Bucket: webhooks.bucket }))
    ).Contents?.map((object) => object.Key);
    // S3 failing, as moto cannot on demand: one object's read, then the listing itself.
    let failing: (commandName: string, input: { Key?: string }) => boolean = () => false;
    moto.s3.middlewareStack.add(
      (next, context) => async (args) => {
        if (failing(context.commandName ?? '', args.input as { Key?: string })) {
          throw Object.assign(new Error('We encountered an internal error.'), {
            name: 'InternalError',
          });
        }
        return next(args);
      },
      { step: 'initialize', name: 's3-fault' },
    );
    const lines: Record<string, unknown>[] = [];
    const replay = createReplayHandler({
      s3: moto.s3,
      bucketName: webhooks.bucket,
      deliveries: sqsDeliveryQueue(moto.sqs, webhooks.deliveryQueueUrl),
      subscriptions: fixedSubscriptions([subscriptionOf('subscriber-1', {})]),
      logger: createLogger({}, (line) => lines.push(JSON.parse(line))),
    });
    try {
      failing = (name, input) => name === 'GetObjectCommand' && input.Key === keys?.[1];
      await expect(replay()).resolves.toMatchObject({ replayedBatches: 2, remainingBatches: 1 });
      expect(lines.filter((line) => line.message === replayLog.replayed)).toHaveLength(1);
      failing = (name) => name === 'ListObjectsV2Command';
      await expect(replay()).rejects.toThrow('internal error');
      // No summary: the alarm's missing data, which pages (docs/deploying.md).
      expect(lines.filter((line) => line.message === replayLog.replayed)).toHaveLength(1);
      failing = () => false;
      await expect(replay()).resolves.toMatchObject({ replayedBatches: 1, remainingBatches: 0 });
    } finally {
      moto.s3.middlewareStack.remove('s3-fault');
    }
    const [subscriber] = receivers;
    await subscriber?.waitForAccepted(3);
    expect(subscriber?.deliveries.map((delivery) => delivery.body).sort()).toEqual(
      [31, 32, 33].map((id) => `{"id":${id},"name":"Sage"}`),
    );
  }, 180_000);

  it('resumes a kept batch after the last record it queued, and sets aside a record that keeps failing', async () => {
    const { webhooks, receivers } = await bedWithReceivers(1);
    const records = [41, 42, 43].map((id) => ({
      eventID: `kept-${id}`,
      eventName: 'INSERT',
      dynamodb: { SequenceNumber: String(1000 + id), NewImage: marshall({ id, name: 'Rue' }) },
    }));
    await moto.s3.send(
      new PutObjectCommand({
        Bucket: webhooks.bucket,
        Key: 'aws/lambda/mapping/shard/2026-11-25T00:00:41.000Z-41',
        Body: JSON.stringify({ payload: JSON.stringify({ Records: records }) }),
      }),
    );
    // The queue takes every message but plant 42's, as in an outage of its own.
    let refusing = true;
    const queue = sqsDeliveryQueue(moto.sqs, webhooks.deliveryQueueUrl);
    const lines: Record<string, unknown>[] = [];
    const replay = createReplayHandler({
      s3: moto.s3,
      bucketName: webhooks.bucket,
      deliveries: {
        send: async (messages) => {
          if (refusing && messages.some((message) => message.payload.includes('"id":42'))) {
            throw new ApiError(errorCodes.storeUnavailable, 'SQS is unavailable.');
          }
          await queue.send(messages);
        },
      },
      subscriptions: fixedSubscriptions([subscriptionOf('subscriber-1', {})]),
      logger: createLogger({}, (line) => lines.push(JSON.parse(line))),
    });
    for (let run = 1; run < setAsideAfterFailures; run += 1) {
      await expect(replay()).resolves.toMatchObject({ replayedBatches: 0, remainingBatches: 1 });
    }
    const setAside = () => lines.filter((line) => line.message === fanoutLog.refused);
    expect(setAside()).toEqual([]);
    // The last failure in a row sets 42 aside, where it pages; 43 goes on, and the batch is done.
    await expect(replay()).resolves.toMatchObject({ replayedBatches: 1, remainingBatches: 0 });
    expect(setAside()).toEqual([expect.objectContaining({ eventID: 'kept-42' })]);
    // A scheduled run leaves it to a person, counted as kept (so the replay's alarm goes on).
    const scheduled = { 'detail-type': 'Scheduled Event', source: 'aws.events' };
    await expect(replay(scheduled)).resolves.toMatchObject({
      replayedBatches: 0,
      remainingBatches: 1,
    });
    // By hand, while it still fails, it stays as it is: never set aside again under a new key.
    for (let run = 1; run <= setAsideAfterFailures + 1; run += 1) {
      await expect(replay()).resolves.toMatchObject({ replayedBatches: 0, remainingBatches: 1 });
    }
    const keys = (await moto.s3.send(new ListObjectsV2Command({ Bucket: webhooks.bucket })))
      .Contents;
    expect(keys?.map((object) => object.Key)).toEqual([
      'set-aside/aws/lambda/mapping/shard/2026-11-25T00:00:41.000Z-41-1042',
    ]);
    // Once the queue takes it, by hand, it goes too.
    refusing = false;
    await expect(replay()).resolves.toMatchObject({ replayedBatches: 1, remainingBatches: 0 });
    const [subscriber] = receivers;
    await subscriber?.waitForAccepted(3);
    // Each once: 41 was not queued again by the seven replays that resumed after it.
    expect(subscriber?.deliveries.map((delivery) => delivery.body).sort()).toEqual(
      [41, 42, 43].map((id) => `{"id":${id},"name":"Rue"}`),
    );
  }, 180_000);

  it('replays a kept batch on the schedule with backoff by its age, and by hand at once', async () => {
    const { webhooks, receivers } = await bedWithReceivers(1);
    const keep = (id: number) => keepBatch(webhooks.bucket, id, 'Moss');
    let offsetMinutes = 0;
    const replay = createReplayHandler({
      s3: moto.s3,
      bucketName: webhooks.bucket,
      deliveries: sqsDeliveryQueue(moto.sqs, webhooks.deliveryQueueUrl),
      subscriptions: fixedSubscriptions([subscriptionOf('subscriber-1', {})]),
      logger: createLogger({}, () => {}),
      now: () => Date.now() + offsetMinutes * 60_000,
    });
    const scheduled = { 'detail-type': 'Scheduled Event', source: 'aws.events' };
    await keep(31);
    // Two minutes old: not yet due on the schedule.
    offsetMinutes = 2;
    await expect(replay(scheduled)).resolves.toEqual({
      replayedBatches: 0,
      newPlants: 0,
      remainingBatches: 1,
      oldestKeptMinutes: 2,
    });
    // By hand: every kept batch at once, delivered.
    offsetMinutes = 0;
    await expect(replay()).resolves.toMatchObject({ replayedBatches: 1, remainingBatches: 0 });
    const [subscriber] = receivers;
    await subscriber?.waitForAccepted(1);
    expect(subscriber?.deliveries.map((delivery) => delivery.body)).toEqual([
      '{"id":31,"name":"Moss"}',
    ]);
    // Five minutes old on the schedule: its first replay.
    await keep(32);
    offsetMinutes = 6;
    await expect(replay(scheduled)).resolves.toEqual({
      replayedBatches: 1,
      newPlants: 1,
      remainingBatches: 0,
      oldestKeptMinutes: 0,
    });
  }, 180_000);
});
