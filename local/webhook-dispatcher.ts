/**
 * Plant webhooks on one machine: reads DynamoDB Local's stream of the plants table, queues every
 * event for every subscriber of its type (the stage-like subscribers `npm start` is given, and
 * the webhook endpoints clients register) and delivers them, with the same fan-out, delivery and
 * schedule code as the deployed functions (`functions/shared/webhooks/`). The queue is this
 * process's timers: each delivery waits on its own, so a slow or failing subscriber never delays
 * another, nor the API.
 *
 * Pending retries and dead letters live in this process only: stopping `npm start` forgets them
 * (deployed, they wait in SQS queues instead). The endpoints' log is in DynamoDB Local, as
 * deployed.
 */

import { setTimeout as wait } from 'node:timers/promises';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  type GetRecordsCommandOutput,
  GetShardIteratorCommand,
  type ShardIteratorType,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { localStoreRegion } from '../functions/shared/dynamodb.ts';
import type { Logger } from '../functions/shared/logger.ts';
import { withEndpointSubscriptions } from '../functions/shared/webhook-endpoints/endpoint-subscriptions.ts';
import {
  type EndpointDeliveryDependencies,
  endpointTargets,
} from '../functions/shared/webhook-endpoints/endpoint-targets.ts';
import {
  attemptDelivery,
  combinedTargets,
  type DeliveryTargets,
  stageSubscriberTargets,
} from '../functions/shared/webhooks/attempt-delivery.ts';
import type { DeliveryMessage } from '../functions/shared/webhooks/delivery-message.ts';
import type { DeliveryQueue } from '../functions/shared/webhooks/delivery-queue.ts';
import {
  type PlantStreamRecord,
  type Subscription,
  subscriptionOf,
  type Webhook,
} from '../functions/shared/webhooks/plant-events.ts';
import {
  fixedSubscriptions,
  queuePlantEventDeliveries,
} from '../functions/shared/webhooks/queue-deliveries.ts';
import {
  defaultRetrySchedule,
  type Subscriber,
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
  /** The webhook endpoints' stores, key and URL policy, when clients may register endpoints. */
  readonly endpoints?: LocalEndpoints;
  /** Seconds before each retry; the product's schedule by default (tests shorten it). */
  readonly retrySchedule?: readonly number[];
  /** How long a subscriber may take to answer. @default 10000 */
  readonly timeoutMilliseconds?: number;
  /** How long to wait after an empty read of the stream. @default 100 */
  readonly pollIntervalMilliseconds?: number;
  readonly logger: Logger;
}

/** The endpoints' delivery settings, and how old the fan-out's endpoint list may be. */
export type LocalEndpoints = Omit<EndpointDeliveryDependencies, 'table' | 'log'> & {
  readonly endpointsTableName: string;
  readonly logTableName: string;
  readonly maxAgeMilliseconds?: number;
};

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
  /** Where the endpoints' test events and recovered events are queued. */
  readonly deliveries: DeliveryQueue;
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
  const stageSubscriptions = options.subscribers.map((subscriber) =>
    subscriptionOf(subscriber.name, subscriber),
  );
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
  const turns = new Set<Promise<void>>();
  const deadLetters: (DeadLetter & { readonly message: DeliveryMessage })[] = [];
  const targets = deliveryTargets(options, stopping.signal);

  /** A message waits for its due time, then takes its turn (an attempt, and what follows). */
  const schedule = (message: DeliveryMessage) => {
    if (stopping.signal.aborted) return;
    const timer = setTimeout(
      () => {
        timers.delete(timer);
        const turn = takeTurn(message).finally(() => turns.delete(turn));
        turns.add(turn);
      },
      Math.max(0, message.dueAt - Date.now()),
    );
    timers.add(timer);
  };
  const takeTurn = async (message: DeliveryMessage) => {
    const step = await attemptDelivery(message, targets(logger), {
      logger,
      schedule: options.retrySchedule ?? defaultRetrySchedule,
      sendOptions: {
        ...(options.timeoutMilliseconds === undefined
          ? {}
          : { timeoutMilliseconds: options.timeoutMilliseconds }),
        signal: stopping.signal,
      },
    }).catch((error: unknown) => {
      if (!stopping.signal.aborted) logger.error('webhook delivery failed unexpectedly', { error });
      return { kind: 'done' } as const;
    });
    if (stopping.signal.aborted) return;
    if (step.kind === 'later') schedule(step.message);
    if (step.kind === 'dead-letter') {
      const { webhookId, payload, version } = step.message;
      deadLetters.push({
        event: { webhookId, payload, ...(version === undefined ? {} : { version }) },
        subscriber: step.message.subscriber,
        attempts: step.attempts,
        lastFailure: step.failure,
        failedAt: new Date().toISOString(),
        message: step.message,
      });
    }
  };
  const deliveries: DeliveryQueue = {
    send: async (messages) => {
      for (const message of messages) schedule(message);
    },
  };
  const fanout = {
    deliveries,
    subscriptions:
      options.endpoints === undefined
        ? fixedSubscriptions(stageSubscriptions)
        : withEndpointSubscriptions(
            stageSubscriptions,
            { documentClient: options.documentClient, ...options.endpoints },
            options.endpoints.maxAgeMilliseconds === undefined
              ? {}
              : { maxAgeMilliseconds: options.endpoints.maxAgeMilliseconds },
          ),
    ...(options.endpoints === undefined
      ? {}
      : {
          eventLog: {
            documentClient: options.documentClient,
            logTableName: options.endpoints.logTableName,
          },
        }),
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

  /** Looks for shards, each read from its start (the first look's are caught up first). */
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
      shards.set(shardId, { start: 'TRIM_HORIZON', closed: endedBefore });
    }
  };

  /**
   * The shard's next records. DynamoDB Local fails an iterator's read once another table has been
   * written since it was made (TrimmedDataAccessException), as AWS does an expired one: both are
   * made again, after the last record read, and read at once.
   */
  const getRecords = async (
    shardId: string,
    state: ShardState,
  ): Promise<Pick<GetRecordsCommandOutput, 'Records' | 'NextShardIterator'>> => {
    for (let attempt = 1; ; attempt += 1) {
      if (state.iterator === undefined) await renewIterator(shardId, state);
      if (state.iterator === undefined) return {};
      try {
        return await streams.send(
          new GetRecordsCommand({ ShardIterator: state.iterator, Limit: 1000 }),
          send,
        );
      } catch (error) {
        const name = (error as { name?: unknown }).name;
        const stale = name === 'TrimmedDataAccessException' || name === 'ExpiredIteratorException';
        if (!stale || attempt === 3) throw error;
        state.iterator = undefined;
      }
    }
  };

  /** Reads every open shard once; returns how many records came. */
  const readShards = async (): Promise<number> => {
    let read = 0;
    for (const [shardId, state] of shards) {
      if (state.closed) continue;
      const { Records = [], NextShardIterator } = await getRecords(shardId, state);
      state.iterator = NextShardIterator;
      // No next iterator: the shard has ended (its children are found by the next refresh).
      if (NextShardIterator === undefined) state.closed = true;
      const timed = Records.map((record) => timedToTheSecond(record, Date.now()));
      const { failedRecord } = await queuePlantEventDeliveries(
        timed as PlantStreamRecord[],
        fanout,
        logger,
      );
      // Read up to the record that could not be queued; it is read again after a pause.
      const failedAt = failedRecord === undefined ? -1 : timed.indexOf(failedRecord as never);
      const done = failedAt === -1 ? timed : timed.slice(0, failedAt);
      state.after = done.at(-1)?.dynamodb?.SequenceNumber ?? state.after;
      if (failedAt !== -1) throw new Error('Some webhook deliveries could not be queued.');
      read += Records.length;
    }
    return read;
  };

  /**
   * Reads an open shard to its end without sending anything: what it holds happened before the
   * start. Every later read resumes after the last record (AFTER_SEQUENCE_NUMBER), never at
   * LATEST: DynamoDB Local fails a LATEST iterator's read (TrimmedDataAccessException) once
   * another table has been written, and a LATEST iterator made again would skip what came
   * meanwhile.
   */
  const catchUp = async (shardId: string, state: ShardState) => {
    await renewIterator(shardId, state);
    while (state.iterator !== undefined) {
      const { Records = [], NextShardIterator } = await getRecords(shardId, state);
      state.iterator = NextShardIterator;
      if (NextShardIterator === undefined) state.closed = true;
      if (Records.length === 0) break;
      state.after = Records.at(-1)?.dynamodb?.SequenceNumber ?? state.after;
    }
  };

  await refreshShards(true);
  // Caught up now, before the API takes its first request: a plant created after this is sent.
  for (const [shardId, state] of shards) {
    if (!state.closed) await catchUp(shardId, state);
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
    deliveries,
    deadLetters: () => deadLetters.map(({ message: _message, ...letter }) => letter),
    redriveDeadLetters: () => {
      const redriven = deadLetters.splice(0);
      const now = Date.now();
      for (const { message } of redriven)
        schedule({ ...message, attempt: 1, dueAt: now, queuedAt: now });
      return redriven.length;
    },
    stop: async () => {
      stopping.abort();
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await polling;
      await Promise.allSettled([...turns]);
      streams.destroy();
    },
  };
}

/**
 * Where each message goes: the stage-like subscribers by name (their secrets in memory), the
 * endpoints as they are stored; once stopping, an attempt's record is not written any more.
 */
function deliveryTargets(
  options: WebhookDispatcherOptions,
  stopping: AbortSignal,
): (logger: Logger) => DeliveryTargets {
  const stage = stageSubscriberTargets(
    options.subscribers.map((subscriber) => ({
      name: subscriber.name,
      url: subscriber.url,
      secret: async () => subscriber.secret,
    })),
  );
  const endpoints =
    options.endpoints === undefined
      ? undefined
      : endpointTargets({
          ...options.endpoints,
          table: { documentClient: options.documentClient, ...options.endpoints },
          log: { documentClient: options.documentClient, ...options.endpoints },
        });
  return (logger) => {
    const combined = combinedTargets(stage, endpoints?.(logger));
    return {
      resolve: async (message) => {
        const resolution = await combined.resolve(message);
        if (!('target' in resolution)) return resolution;
        const { attempt, record } = resolution.target;
        return {
          target: {
            attempt,
            ...(record === undefined
              ? {}
              : {
                  record: async (...args: Parameters<typeof record>) => {
                    if (!stopping.aborted) await record(...args);
                  },
                }),
          },
        };
      },
    };
  };
}

/** Waits, or less when `signal` aborts (then without an error). */
async function sleep(milliseconds: number, signal: AbortSignal): Promise<void> {
  await wait(milliseconds, undefined, { signal }).catch(() => undefined);
}
