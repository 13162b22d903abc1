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

import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { localStoreRegion } from '../functions/shared/platform/dynamodb.ts';
import type { Logger } from '../functions/shared/platform/logger.ts';
import {
  attemptDelivery,
  combinedTargets,
  type DeliveryTargets,
  stageSubscriberTargets,
} from '../functions/shared/webhooks/attempt-delivery.ts';
import type { DeliveryMessage } from '../functions/shared/webhooks/delivery-message.ts';
import type { DeliveryQueue } from '../functions/shared/webhooks/delivery-queue.ts';
import {
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
import { withEndpointSubscriptions } from '../functions/webhook-endpoints/endpoint-subscriptions.ts';
import {
  type EndpointDeliveryDependencies,
  endpointTargets,
} from '../functions/webhook-endpoints/endpoint-targets.ts';
import { eventLogOf } from '../functions/webhook-endpoints/webhook-log.ts';
import { readPlantsStream } from './plants-stream.ts';

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
export type LocalEndpoints = Omit<EndpointDeliveryDependencies, 'stores'> & {
  readonly endpointsTableName: string;
  readonly logTableName: string;
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

/**
 * Starts reading the stream from now: plants created before the start are not sent.
 * @throws when the table has no stream.
 */
export async function startWebhookDispatcher(
  options: WebhookDispatcherOptions,
): Promise<WebhookDispatcher> {
  const stopping = new AbortController();
  const streams = await plantsStreamOf(options);
  const queue = timerQueue(options, stopping.signal);
  const fanout = fanoutOf(options, queue.deliveries);
  const reading = await readPlantsStream({
    ...streams,
    handle: (records) => queuePlantEventDeliveries(records, fanout, options.logger),
    pollIntervalMilliseconds: options.pollIntervalMilliseconds ?? 100,
    logger: options.logger,
    signal: stopping.signal,
  });
  return {
    deliveries: queue.deliveries,
    deadLetters: queue.deadLetters,
    redriveDeadLetters: queue.redriveDeadLetters,
    stop: async () => {
      stopping.abort();
      queue.cancel();
      await reading.finished;
      await queue.settled();
      streams.streams.destroy();
    },
  };
}

/** The table's stream and a client of DynamoDB Local's streams API. */
async function plantsStreamOf(options: WebhookDispatcherOptions) {
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
  return { streamArn, streams };
}

/**
 * The local stand-in for the delivery queue: each message waits on a timer of its own for its
 * due time, then takes its turn (an attempt, and a retry or dead letter after it).
 */
function timerQueue(options: WebhookDispatcherOptions, stopping: AbortSignal) {
  const { logger } = options;
  const timers = new Set<NodeJS.Timeout>();
  const turns = new Set<Promise<void>>();
  const deadLetters: (DeadLetter & { readonly message: DeliveryMessage })[] = [];
  const targets = deliveryTargets(options, stopping);

  const schedule = (message: DeliveryMessage) => {
    if (stopping.aborted) return;
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
        signal: stopping,
      },
    }).catch((error: unknown) => {
      if (!stopping.aborted) logger.error('webhook delivery failed unexpectedly', { error });
      return { kind: 'done' } as const;
    });
    if (stopping.aborted) return;
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

  return {
    deliveries: {
      send: async (messages) => {
        for (const message of messages) schedule(message);
      },
    } satisfies DeliveryQueue,
    deadLetters: () => deadLetters.map(({ message: _message, ...letter }) => letter),
    redriveDeadLetters: () => {
      const redriven = deadLetters.splice(0);
      const now = Date.now();
      for (const { message } of redriven)
        schedule({ ...message, attempt: 1, dueAt: now, queuedAt: now });
      return redriven.length;
    },
    /** Cancels every waiting message. */
    cancel: () => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
    /** Resolves once every turn under way has ended. */
    settled: async () => {
      await Promise.allSettled([...turns]);
    },
  };
}

/** The fan-out's dependencies: the stage-like subscribers, and the endpoints when there are any. */
function fanoutOf(options: WebhookDispatcherOptions, deliveries: DeliveryQueue) {
  const stageSubscriptions = options.subscribers.map((subscriber) =>
    subscriptionOf(subscriber.name, subscriber),
  );
  const { endpoints } = options;
  if (endpoints === undefined) {
    return { deliveries, subscriptions: fixedSubscriptions(stageSubscriptions) };
  }
  return {
    deliveries,
    subscriptions: withEndpointSubscriptions(stageSubscriptions, {
      documentClient: options.documentClient,
      logTableName: endpoints.logTableName,
    }),
    eventLog: eventLogOf({
      documentClient: options.documentClient,
      logTableName: endpoints.logTableName,
    }),
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
          stores: { documentClient: options.documentClient, ...options.endpoints },
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
