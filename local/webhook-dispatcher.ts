/**
 * Plant webhooks on one machine: reads DynamoDB Local's stream of the plants table and delivers
 * every event to every subscriber of its type, in the subscriber's format, with the same code and
 * schedule as the deployed fan-out and delivery functions (`functions/shared/webhooks/`). Each delivery
 * to each subscriber runs on its own, so a slow or failing subscriber never delays another, nor
 * the API.
 *
 * Pending retries and dead letters live in this process only: stopping `npm start` forgets them
 * (deployed, they wait in SQS queues instead).
 */

import { setTimeout as wait } from 'node:timers/promises';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type ShardIteratorType,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { localStoreRegion } from '../functions/shared/dynamodb.ts';
import type { Logger } from '../functions/shared/logger.ts';
import { itemsNotPlantsLog } from '../functions/shared/stored-plant.ts';
import {
  type PlantEvent,
  type PlantStreamRecord,
  plantEventOf,
  type Subscription,
  subscriptionOf,
  type Webhook,
  webhookFor,
} from '../functions/shared/webhooks/plant-events.ts';
import {
  defaultRetrySchedule,
  nextStepAfter,
  type Subscriber,
  sendWebhook,
} from '../functions/shared/webhooks/send-webhook.ts';

export interface WebhookDispatcherOptions {
  /** DynamoDB Local (or another store with streams). */
  readonly endpoint: string;
  /** The credentials whose database holds the table (DynamoDB Local keeps one per key id). */
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
  readonly documentClient: DynamoDBDocumentClient;
  readonly tableName: string;
  /** Each with what it hears of and in which format. */
  readonly subscribers: readonly LocalSubscriber[];
  /** Seconds before each retry; the product's schedule by default (tests shorten it). */
  readonly retrySchedule?: readonly number[];
  /** How long a subscriber may take to answer. @default 10000 */
  readonly timeoutMilliseconds?: number;
  /** How long to wait after an empty read of the stream. @default 100 */
  readonly pollIntervalMilliseconds?: number;
  readonly logger: Logger;
}

/**
 * A receiver: where and with which secret, and what it hears of (by default, as a deployed
 * subscriber: `plant.created` in the `plant` format).
 */
export type LocalSubscriber = Subscriber & Partial<Pick<Subscription, 'events' | 'format'>>;

/** A delivery whose every attempt failed, kept with its last failure. */
export interface DeadLetter {
  readonly event: Webhook;
  readonly subscriber: string;
  readonly attempts: number;
  readonly lastFailure: string;
  readonly failedAt: string;
}

export interface WebhookDispatcher {
  /** Deliveries that used up the schedule, oldest first. */
  deadLetters(): readonly DeadLetter[];
  /** Starts every dead letter's delivery again from its first attempt; returns how many. */
  redriveDeadLetters(): number;
  /** Stops reading the stream and cancels every pending delivery and retry. */
  stop(): Promise<void>;
}

/** How often the stream's shards are looked up again (DynamoDB Local may start new ones). */
const shardRefreshMilliseconds = 2_000;

/**
 * A stream record with AWS's time of it. AWS gives a record's time rounded down to the second
 * (`ApproximateCreationDateTime`, DynamoDB Streams API reference, StreamRecord); DynamoDB Local
 * rounds it down to the minute. The dispatcher reads a record moments after its write, so the
 * time it is read, rounded down to the second and kept within the record's minute, is that time.
 */
export function timedToTheSecond<Streamed extends PlantStreamRecord>(
  record: Streamed,
  now: number,
): Streamed {
  const stated = record.dynamodb?.ApproximateCreationDateTime;
  const statedSeconds = stated instanceof Date ? stated.getTime() / 1000 : stated;
  // Nothing to go by, or a time finer than the minute: kept as stated.
  if (statedSeconds === undefined || !Number.isFinite(statedSeconds)) return record;
  if (statedSeconds % 60 !== 0) return record;
  const minute = Math.floor(statedSeconds / 60) * 60;
  const seconds = Math.min(Math.max(Math.floor(now / 1000), minute), minute + 59);
  return { ...record, dynamodb: { ...record.dynamodb, ApproximateCreationDateTime: seconds } };
}

/**
 * Starts reading the stream from now (LATEST): plants created before the start are not sent.
 * @throws when the table has no stream.
 */
export async function startWebhookDispatcher(
  options: WebhookDispatcherOptions,
): Promise<WebhookDispatcher> {
  const { logger } = options;
  const subscribers = options.subscribers.map((subscriber) => ({
    ...subscriber,
    ...subscriptionOf(subscriber.name, subscriber),
  }));
  const schedule = options.retrySchedule ?? defaultRetrySchedule;
  const pollInterval = options.pollIntervalMilliseconds ?? 100;
  const { Table } = await options.documentClient.send(
    new DescribeTableCommand({ TableName: options.tableName }),
  );
  const streamArn = Table?.LatestStreamArn;
  if (streamArn === undefined) throw new Error(`The table ${options.tableName} has no stream.`);
  const streams = new DynamoDBStreamsClient({
    endpoint: options.endpoint,
    region:
      options.credentials === undefined
        ? (process.env.AWS_REGION ?? 'us-east-1')
        : localStoreRegion,
    credentials: options.credentials ?? { accessKeyId: 'local', secretAccessKey: 'local' },
  });

  const stopping = new AbortController();
  const timers = new Set<NodeJS.Timeout>();
  const deadLetters: DeadLetter[] = [];

  /** One attempt of one delivery; schedules the next on failure. */
  const attempt = async (
    event: Webhook,
    subscriber: Subscriber,
    number: number,
    queuedAt: number,
  ) => {
    if (stopping.signal.aborted) return;
    const outcome = await sendWebhook(event, subscriber, {
      ...(options.timeoutMilliseconds === undefined
        ? {}
        : { timeoutMilliseconds: options.timeoutMilliseconds }),
      signal: stopping.signal,
    });
    if (stopping.signal.aborted) return;
    const step = nextStepAfter(
      outcome,
      { webhookId: event.webhookId, subscriber: subscriber.name, attempt: number, queuedAt },
      logger,
      schedule,
    );
    if (step.kind === 'delivered') return;
    if (step.kind === 'dead-letter') {
      deadLetters.push({
        event,
        subscriber: subscriber.name,
        attempts: number,
        lastFailure: step.failure,
        failedAt: new Date().toISOString(),
      });
      return;
    }
    const timer = setTimeout(() => {
      timers.delete(timer);
      void attempt(event, subscriber, number + 1, queuedAt);
    }, step.delaySeconds * 1000);
    timers.add(timer);
  };

  const dispatch = (event: PlantEvent) => {
    const queuedAt = Date.now();
    for (const subscriber of subscribers) {
      const webhook = webhookFor(event, subscriber);
      if (webhook !== undefined) void attempt(webhook, subscriber, 1, queuedAt);
    }
  };

  /**
   * Each shard: where reading starts when its iterator must be made (again), the iterator to
   * read next, the last sequence number read, and whether the shard has ended.
   */
  interface ShardState {
    readonly start: ShardIteratorType;
    iterator?: string;
    after?: string;
    closed: boolean;
  }
  const shards = new Map<string, ShardState>();
  const send = { abortSignal: stopping.signal };

  /** An iterator after the last record read, or at the shard's start when none was read. */
  const renewIterator = async (shardId: string, state: ShardState) => {
    const { ShardIterator } = await streams.send(
      new GetShardIteratorCommand({
        StreamArn: streamArn,
        ShardId: shardId,
        ...(state.after === undefined
          ? { ShardIteratorType: state.start }
          : { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: state.after }),
      }),
      send,
    );
    state.iterator = ShardIterator;
    if (ShardIterator === undefined) state.closed = true;
  };

  /** Looks for shards; the first look starts at LATEST, shards found later from their start. */
  const refreshShards = async (first: boolean) => {
    const { StreamDescription } = await streams.send(
      new DescribeStreamCommand({ StreamArn: streamArn }),
      send,
    );
    for (const shard of StreamDescription?.Shards ?? []) {
      const shardId = shard.ShardId;
      if (shardId === undefined || shards.has(shardId)) continue;
      // A shard already ended at the first look holds only records from before the start.
      const endedBefore = first && shard.SequenceNumberRange?.EndingSequenceNumber !== undefined;
      shards.set(shardId, { start: first ? 'LATEST' : 'TRIM_HORIZON', closed: endedBefore });
    }
  };

  /** Reads every open shard once; returns how many records came. */
  const readShards = async (): Promise<number> => {
    let read = 0;
    for (const [shardId, state] of shards) {
      if (state.closed) continue;
      if (state.iterator === undefined) await renewIterator(shardId, state);
      if (state.iterator === undefined) continue;
      const { Records = [], NextShardIterator } = await streams.send(
        new GetRecordsCommand({ ShardIterator: state.iterator, Limit: 1000 }),
        send,
      );
      state.iterator = NextShardIterator;
      // No next iterator: the shard has ended (its children are found by the next refresh).
      if (NextShardIterator === undefined) state.closed = true;
      for (const record of Records) {
        state.after = record.dynamodb?.SequenceNumber ?? state.after;
        let event: PlantEvent | undefined;
        try {
          const now = Date.now();
          event = plantEventOf(timedToTheSecond(record, now), now);
        } catch (error) {
          // An item another tool wrote that is not a plant: never sent, never in the way.
          logger.warn(itemsNotPlantsLog.message, {
            [itemsNotPlantsLog.countField]: 1,
            eventID: record.eventID,
            error,
          });
          continue;
        }
        if (event !== undefined) dispatch(event);
      }
      read += Records.length;
    }
    return read;
  };

  await refreshShards(true);
  // LATEST means "from when the iterator is made": make them now, before the API takes its
  // first request, or a plant created before the first read would never be sent.
  for (const [shardId, state] of shards) {
    if (!state.closed) await renewIterator(shardId, state);
  }
  const polling = (async () => {
    let refreshedAt = Date.now();
    while (!stopping.signal.aborted) {
      try {
        if (Date.now() - refreshedAt > shardRefreshMilliseconds) {
          refreshedAt = Date.now();
          await refreshShards(false);
        }
        const read = await readShards();
        if (read === 0) await sleep(pollInterval, stopping.signal);
      } catch (error) {
        if (stopping.signal.aborted) break;
        // The store paused or restarted: iterators may have expired. Every open shard resumes
        // after its last record read (or from its start) once the store answers again.
        logger.warn('could not read the plants stream; retrying', { error });
        for (const state of shards.values()) state.iterator = undefined;
        await sleep(1_000, stopping.signal);
      }
    }
  })();

  return {
    deadLetters: () => [...deadLetters],
    redriveDeadLetters: () => {
      const redriven = deadLetters.splice(0);
      for (const letter of redriven) {
        const subscriber = subscribers.find((entry) => entry.name === letter.subscriber);
        if (subscriber !== undefined) void attempt(letter.event, subscriber, 1, Date.now());
      }
      return redriven.length;
    },
    stop: async () => {
      stopping.abort();
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await polling;
      streams.destroy();
    },
  };
}

/** Waits, or less when `signal` aborts (then without an error). */
async function sleep(milliseconds: number, signal: AbortSignal): Promise<void> {
  await wait(milliseconds, undefined, { signal }).catch(() => undefined);
}
