/**
 * Webhook endpoints at scale: registering `endpoints` through the local API, 50 to a client, then
 * one plant event fanned out to all of them and a stage subscriber by the fan-out's own code
 * (`queuePlantEventDeliveries`) onto moto's SQS, and full stream batches onto `npm start`'s. Reported: its time and moto's share of it, its
 * SQS calls, and how soon the stage subscriber's message was queued. moto answers a batch far
 * slower than SQS, so the SQS share is the emulator's, not AWS's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { CreateQueueCommand, type SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { MotoServer } from '../beds/moto-server.ts';
import { routes } from '../functions/shared/http/routes.ts';
import { createDocumentClient } from '../functions/shared/platform/dynamodb.ts';
import { createLogger } from '../functions/shared/platform/logger.ts';
import { parseDeliveryMessages } from '../functions/shared/webhooks/delivery-message.ts';
import { sqsDeliveryQueue } from '../functions/shared/webhooks/delivery-queue.ts';
import { subscriptionOf } from '../functions/shared/webhooks/plant-events.ts';
import {
  fixedSubscriptions,
  queuePlantEventDeliveries,
} from '../functions/shared/webhooks/queue-deliveries.ts';
import { withEndpointSubscriptions } from '../functions/webhook-endpoints/endpoint-subscriptions.ts';
import { localUrlPolicy } from '../functions/webhook-endpoints/endpoint-url.ts';
import { eventLogOf } from '../functions/webhook-endpoints/webhook-log.ts';
import { functionSettings } from '../infra/function-settings.ts';
import { fanoutStreamSettings } from '../infra/webhook-pipeline-settings.ts';
import { startLocalApi } from '../local/local-api.ts';
import { memoryQueues } from '../local/pipeline/memory-queues.ts';
import { percentile, round } from './statistics.ts';

/** The most endpoints a client may have (`docs/api.md`, limits). */
const endpointsPerClient = 50;
/** The endpoints an event is fanned out to on moto. */
const motoEndpoints = 1_000;
/** The stage subscriber beside the endpoints. */
const stageSubscriber = 'audit';
/** What a registration needs, as the route table says (`webhooks/manage` and `plants/read`). */
const registrationScope = (
  routes.find((route) => route.method === 'POST' && route.path === '/webhook-endpoints')?.scopes ??
  []
).join(' ');

export interface EndpointFigures {
  readonly registration: {
    readonly endpoints: number;
    readonly clients: number;
    readonly concurrency: number;
    /** From the request sent to the 201 read, ms. */
    readonly p50: number;
    readonly p99: number;
    readonly max: number;
    readonly perSecond: number;
  };
  readonly fanout: {
    readonly endpoints: number;
    /** Enabled endpoints read from the index. */
    readonly listed: number;
    readonly events: number;
    /** Messages queued per event: one per endpoint and the stage subscriber. */
    readonly messagesPerEvent: number;
    readonly sqsCallsPerEvent: number;
    /** Reading the enabled endpoints' index, ms (again only after an endpoint changes). */
    readonly listRead: number;
    /** One event's fan-out with the list in hand: the event kept, its deliveries queued, ms. */
    readonly p50: number;
    readonly max: number;
    /** Of which moto's SQS: from the first SendMessageBatch to the last answer, ms (p50). */
    readonly sqsP50: number;
    /** From the fan-out's start to SQS taking the stage subscriber's message, ms (p50). */
    readonly stageSubscriberQueuedP50: number;
  };
  /** A full stream batch to every endpoint, onto `npm start`'s SQS stand-in: the code's own time. */
  readonly batch: {
    readonly events: number;
    readonly runs: number;
    /** Deliveries queued a batch, and the queue messages and SendMessageBatch calls they took. */
    readonly deliveries: number;
    readonly messages: number;
    readonly sqsCalls: number;
    /** The event log written, every delivery bundled and queued, ms. */
    readonly p50: number;
    readonly max: number;
    /** The fan-out function's timeout, s. */
    readonly timeoutSeconds: number;
  };
}

export async function measureWebhookEndpoints(options: {
  readonly moto: MotoServer;
  readonly dynamoDbUrl: string;
  readonly endpoints: number;
  readonly events: number;
  /** Full stream batches fanned out, one after the other. */
  readonly batches: number;
  readonly concurrency?: number;
}): Promise<EndpointFigures> {
  const keysDirectory = mkdtempSync(join(tmpdir(), 'plant-store-bench-endpoints-'));
  const api = await startLocalApi({
    port: 0,
    dynamoDbUrl: options.dynamoDbUrl,
    tableName: `bench-endpoints-${Date.now()}`,
    keysDirectory,
    logger: createLogger({}, () => {}),
    throttlingStage: 'off',
    // Receivers are never called here: a loopback URL passes the local policy without DNS.
    webhooks: { endpointUrlPolicy: localUrlPolicy },
  });
  try {
    const registration = await register(
      api.url,
      api.signToken.bind(api),
      options.endpoints,
      options.concurrency ?? 4,
    );
    const fanout = await fanOut({ ...options, tableName: api.tableName });
    const batch = await fanOutBatches({ ...options, tableName: api.tableName });
    return { registration, fanout, batch };
  } finally {
    await api.stop();
    rmSync(keysDirectory, { recursive: true, force: true });
  }
}

async function register(
  url: string,
  signToken: (options: { scope: string; subject: string }) => string,
  endpoints: number,
  concurrency: number,
): Promise<EndpointFigures['registration']> {
  const clients = Math.ceil(endpoints / endpointsPerClient);
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < endpoints) {
      const index = next;
      next += 1;
      const subject = `bench-client-${Math.floor(index / endpointsPerClient)}`;
      const sent = performance.now();
      const response = await fetch(`${url}/webhook-endpoints`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${signToken({ scope: registrationScope, subject })}`,
          'Content-Type': 'application/json',
        },
        body: JSON.stringify({ url: `http://127.0.0.1:9/hooks/${index}` }),
      });
      await response.text();
      latencies.push(performance.now() - sent);
      if (response.status !== 201) throw new Error(`Registration ${index}: ${response.status}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    endpoints,
    clients,
    concurrency,
    p50: round(percentile(latencies, 0.5)),
    p99: round(percentile(latencies, 0.99)),
    max: round(latencies.at(-1) ?? 0),
    perSecond: round(endpoints / seconds),
  };
}

async function fanOut(options: {
  readonly moto: MotoServer;
  readonly dynamoDbUrl: string;
  readonly tableName: string;
  readonly events: number;
}): Promise<EndpointFigures['fanout']> {
  const documentClient = createDocumentClient({ url: options.dynamoDbUrl });
  try {
    // The list as the fan-out reads it (the enabled endpoints' index), timed on its own; the
    // events then use it as the fan-out does until an endpoint changes.
    const listStarted = performance.now();
    const everyone = await withEndpointSubscriptions([subscriptionOf(stageSubscriber, {})], {
      documentClient,
      logTableName: `${options.tableName}-webhook-log`,
    }).current();
    const listRead = performance.now() - listStarted;
    // The stage subscriber and 1,000 endpoints: moto takes superlinearly longer past them (2,000
    // took 88 s an event), and its time is the emulator's anyway.
    const subscriptions = everyone.slice(0, 1 + motoEndpoints);
    const eventLog = { documentClient, logTableName: `${options.tableName}-webhook-log` };
    const logger = createLogger({}, () => {});
    const runs: { total: number; sqs: number; stageQueued: number; calls: number }[] = [];
    for (let index = 0; index < options.events; index += 1) {
      // A queue per event: moto scans a queue's messages on every call, so a growing queue
      // would slow each event more than the last, as SQS never does.
      const { QueueUrl = '' } = await options.moto.sqs.send(
        new CreateQueueCommand({ QueueName: `bench-deliveries-${Date.now()}-${index}` }),
      );
      const sqs = timedSqs(options.moto.sqs);
      const record = newPlantRecord(`bench-event-${index}`, BigInt(index + 1), index + 1);
      const started = performance.now();
      const outcome = await queuePlantEventDeliveries(
        [record],
        {
          deliveries: sqsDeliveryQueue(sqs.client, QueueUrl),
          subscriptions: fixedSubscriptions(subscriptions),
          eventLog: eventLogOf(eventLog),
        },
        logger,
      );
      if (outcome.failedRecord !== undefined) throw new Error('the fan-out could not queue');
      runs.push({
        total: performance.now() - started,
        sqs: sqs.lastEnd - sqs.firstStart,
        stageQueued: sqs.stageQueuedAt - started,
        calls: sqs.calls,
      });
    }
    const sorted = (pick: (run: (typeof runs)[number]) => number) =>
      runs.map(pick).sort((a, b) => a - b);
    return {
      endpoints: subscriptions.length - 1,
      listed: everyone.length - 1,
      events: options.events,
      messagesPerEvent: subscriptions.length,
      sqsCallsPerEvent: Math.max(...runs.map((run) => run.calls)),
      listRead: round(listRead),
      p50: round(
        percentile(
          sorted((run) => run.total),
          0.5,
        ),
      ),
      max: round(Math.max(...runs.map((run) => run.total))),
      sqsP50: round(
        percentile(
          sorted((run) => run.sqs),
          0.5,
        ),
      ),
      stageSubscriberQueuedP50: round(
        percentile(
          sorted((run) => run.stageQueued),
          0.5,
        ),
      ),
    };
  } finally {
    documentClient.destroy();
  }
}

/** A stream record of a new plant, as the fan-out reads it. */
function newPlantRecord(eventID: string, id: bigint, sequenceNumber: number) {
  return {
    eventID,
    eventName: 'INSERT',
    dynamodb: {
      SequenceNumber: String(sequenceNumber),
      ApproximateCreationDateTime: Math.floor(Date.now() / 1000),
      NewImage: marshall({ id, name: `Plant ${id}`, version: 1 }),
    },
  };
}

/**
 * Full stream batches (`fanoutStreamSettings.batchSize` new plants) fanned out to every endpoint
 * by the fan-out's own code, the event log on DynamoDB Local and the queue `npm start`'s: what
 * the code takes of the fan-out's timeout, SQS's round trips aside (`npm run capacity` models
 * those).
 */
async function fanOutBatches(options: {
  readonly dynamoDbUrl: string;
  readonly tableName: string;
  readonly batches: number;
}): Promise<EndpointFigures['batch']> {
  const documentClient = createDocumentClient({ url: options.dynamoDbUrl });
  const queues = memoryQueues();
  try {
    const logTableName = `${options.tableName}-webhook-log`;
    const subscriptions = await withEndpointSubscriptions([subscriptionOf(stageSubscriber, {})], {
      documentClient,
      logTableName,
    }).current();
    const events = fanoutStreamSettings.batchSize;
    const times: number[] = [];
    let counted = { deliveries: 0, messages: 0, sqsCalls: 0 };
    for (let run = 0; run < options.batches; run += 1) {
      const queue = queues.create(`bench-batch-${run}`, { visibilityTimeoutSeconds: 180 });
      const counting = { calls: 0 };
      const sqs = {
        send: (command: never) => {
          counting.calls += 1;
          return queues.sqs.send(command);
        },
      } as Pick<SQSClient, 'send'>;
      const records = Array.from({ length: events }, (_, index) =>
        newPlantRecord(
          `bench-batch-${run}-${index}`,
          BigInt(1_000_000 * (run + 1) + index),
          index + 1,
        ),
      );
      const started = performance.now();
      const outcome = await queuePlantEventDeliveries(
        records,
        {
          deliveries: sqsDeliveryQueue(sqs, queue.url),
          subscriptions: fixedSubscriptions(subscriptions),
          eventLog: eventLogOf({ documentClient, logTableName }),
        },
        createLogger({}, () => {}),
      );
      times.push(performance.now() - started);
      if (outcome.failedRecord !== undefined) throw new Error('the fan-out could not queue');
      const bodies = queues.bodies(queue.url);
      counted = {
        deliveries: bodies.reduce((sum, body) => sum + parseDeliveryMessages(body, 0).length, 0),
        messages: bodies.length,
        sqsCalls: counting.calls,
      };
    }
    times.sort((a, b) => a - b);
    return {
      events,
      runs: options.batches,
      ...counted,
      p50: round(percentile(times, 0.5)),
      max: round(times.at(-1) ?? 0),
      timeoutSeconds: functionSettings.webhookFanout.timeoutSeconds,
    };
  } finally {
    queues.close();
    documentClient.destroy();
  }
}

/**
 * moto's SQS client, counting the SendMessageBatch calls made through it, the span from the
 * first call to the last answer, and when SQS took the stage subscriber's message.
 */
function timedSqs(sqs: SQSClient) {
  const timing = {
    calls: 0,
    firstStart: 0,
    lastEnd: 0,
    stageQueuedAt: 0,
    client: undefined as unknown as Pick<SQSClient, 'send'>,
  };
  timing.client = {
    send: async (command: SendMessageBatchCommand) => {
      timing.calls += 1;
      if (timing.firstStart === 0) timing.firstStart = performance.now();
      const answer = await sqs.send(command);
      timing.lastEnd = performance.now();
      const bodies = (command.input.Entries ?? []).map((entry) => entry.MessageBody ?? '');
      if (bodies.some((body) => body.includes(`"subscriber":"${stageSubscriber}"`)))
        timing.stageQueuedAt = timing.lastEnd;
      return answer;
    },
  } as unknown as Pick<SQSClient, 'send'>;
  return timing;
}
