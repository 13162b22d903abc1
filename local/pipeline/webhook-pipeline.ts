/**
 * The deployed webhook path, run on this machine: the fan-out and delivery handlers, unchanged,
 * fed by imitations of Lambda's event source mappings (the plants stream → fan-out → Deliveries →
 * delivery, which sends later attempts to Retries and the last failure to DeadLetters) with the
 * stack's own settings (`infra/webhook-pipeline-settings.ts`). `npm start` runs it on in-process
 * queues (`memory-queues.ts`); the test beds run it on moto's SQS, Secrets Manager and S3.
 */
import { randomUUID } from 'node:crypto';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import type { Logger } from '../../functions/shared/platform/logger.ts';
import type { DeliveryQueue } from '../../functions/shared/webhooks/delivery-queue.ts';
import type { Subscription } from '../../functions/shared/webhooks/plant-events.ts';
import type { SendOptions } from '../../functions/shared/webhooks/send-webhook.ts';
import type { EndpointDeliveryDependencies } from '../../functions/webhook-endpoints/endpoint-targets.ts';
import {
  deliveryBatchSize,
  fanoutStreamSettings,
  retryMaximumConcurrency,
} from '../../infra/webhook-pipeline-settings.ts';
import { startSqsMapping } from './sqs-mapping.ts';
import {
  type RunningMapping,
  type StreamMappingOptions,
  startStreamMapping,
} from './stream-mapping.ts';

/**
 * The modules of `functions/` the pipeline builds its handlers and their dependencies from, by
 * name: imported by their URLs (`importPipelineModules`), so that hot reload can bring fresh ones.
 */
const moduleFiles = {
  fanout: 'webhook-fanout/create-handler.ts',
  deliver: 'deliver-webhook/create-handler.ts',
  deliveryQueue: 'shared/webhooks/delivery-queue.ts',
  plantEvents: 'shared/webhooks/plant-events.ts',
  queueDeliveries: 'shared/webhooks/queue-deliveries.ts',
  subscriptions: 'webhook-endpoints/endpoint-subscriptions.ts',
  webhookLog: 'webhook-endpoints/webhook-log.ts',
} as const;

export interface PipelineModules {
  readonly fanout: typeof import('../../functions/webhook-fanout/create-handler.ts');
  readonly deliver: typeof import('../../functions/deliver-webhook/create-handler.ts');
  readonly deliveryQueue: typeof import('../../functions/shared/webhooks/delivery-queue.ts');
  readonly plantEvents: typeof import('../../functions/shared/webhooks/plant-events.ts');
  readonly queueDeliveries: typeof import('../../functions/shared/webhooks/queue-deliveries.ts');
  readonly subscriptions: typeof import('../../functions/webhook-endpoints/endpoint-subscriptions.ts');
  readonly webhookLog: typeof import('../../functions/webhook-endpoints/webhook-log.ts');
}

/** The pipeline's modules, each imported by `importModule` (as they are, by default). */
export async function importPipelineModules(
  importModule: (url: URL) => Promise<unknown> = (url) => import(url.href),
): Promise<PipelineModules> {
  const entries = await Promise.all(
    Object.entries(moduleFiles).map(async ([name, file]) => [
      name,
      await importModule(new URL(`../../functions/${file}`, import.meta.url)),
    ]),
  );
  return Object.fromEntries(entries) as PipelineModules;
}

/** A queue as SQS names it. */
export interface PipelineQueue {
  readonly url: string;
  readonly arn: string;
}

/** A stage subscriber: its secret in Secrets Manager, and what it hears of. */
export interface PipelineSubscriber extends Partial<Pick<Subscription, 'events' | 'format'>> {
  readonly name: string;
  readonly url: string;
  readonly secretArn: string;
}

export interface WebhookPipelineOptions {
  /** The functions' SQS client: each call goes to the server of its queue. */
  readonly sqs: Pick<SQSClient, 'send'>;
  /** What each mapping polls with. @default the functions' client */
  readonly pollers?: {
    readonly deliveries: Pick<SQSClient, 'send'>;
    readonly retries: Pick<SQSClient, 'send'>;
  };
  readonly region: string;
  readonly queues: {
    readonly deliveries: PipelineQueue;
    readonly retries: PipelineQueue;
    readonly deadLetters: PipelineQueue;
  };
  /** Where the fan-out sends. @default the Deliveries queue (a test breaks it to see failures) */
  readonly fanoutQueueUrl?: string;
  /** The plants table's stream, where the fan-out starts reading and where it keeps failures. */
  readonly stream: Pick<
    StreamMappingOptions,
    | 'streams'
    | 'streamArn'
    | 'startingPosition'
    | 'onFailure'
    | 'pollIntervalMilliseconds'
    | 'checkpointFile'
  > & { readonly retryAttempts?: number };
  readonly secretsManager: Pick<SecretsManagerClient, 'send'>;
  readonly subscribers: readonly PipelineSubscriber[];
  /** The webhook endpoints' stores, key and URL policy, where clients may register endpoints. */
  readonly endpoints?: EndpointDeliveryDependencies;
  /** Seconds before each retry. @default the product's schedule */
  readonly retrySchedule?: readonly number[];
  /** The longest hop of a waiting retry, in seconds. @default 900 */
  readonly maximumDelaySeconds?: number;
  readonly sendOptions?: SendOptions;
  /** Pollers of the Deliveries queue. @default 2 */
  readonly deliveryConcurrency?: number;
  /** Pollers of the Retries queue (at most its maximum concurrency). @default 4 */
  readonly retryConcurrency?: number;
  readonly logger: Logger;
}

export interface WebhookPipeline {
  /** Where the endpoints' test events and recovered events are queued: Deliveries. */
  readonly deliveries: DeliveryQueue;
  readonly stream: RunningMapping;
  readonly delivery: RunningMapping;
  readonly retry: RunningMapping;
  /** The fan-out as the stream mapping invokes it: for the replay of kept batches. */
  fanout(event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse>;
  /**
   * Builds both handlers again from `modules` and returns what puts them in use (the next
   * invocations then run them), so that a reload can build everything before it changes anything.
   */
  prepare(modules: PipelineModules): () => void;
  /** Stops the three mappings, each after the invocation in hand. */
  stop(): Promise<void>;
}

/** The stream's region-less function ARN the on-failure records name. */
const fanoutArn = (region: string) =>
  `arn:aws:lambda:${region}:000000000000:function:webhook-fanout`;

export async function startWebhookPipeline(
  options: WebhookPipelineOptions,
  modules: PipelineModules,
): Promise<WebhookPipeline> {
  const { queues, logger } = options;
  const build = (fresh: PipelineModules) => ({
    fanout: fanoutOf(options, fresh),
    deliver: deliverOf(options, fresh),
  });
  let handlers = build(modules);
  const subscriptions = subscriptionsOf(options, modules);
  const stream = await startStreamMapping({
    ...options.stream,
    handler: (event, context) => handlers.fanout(event, context),
    functionArn: fanoutArn(options.region),
    // The filter the stack gives the mapping: every kind, when endpoints may hear of any.
    eventNames:
      options.endpoints === undefined
        ? modules.plantEvents.streamRecordKinds(subscriptions)
        : ['INSERT', 'MODIFY', 'REMOVE'],
    batchSize: fanoutStreamSettings.batchSize,
    retryAttempts: options.stream.retryAttempts ?? fanoutStreamSettings.retryAttempts,
    logger,
  });
  const mapping = (queue: PipelineQueue, sqs: Pick<SQSClient, 'send'>, concurrency: number) =>
    startSqsMapping({
      sqs,
      queueUrl: queue.url,
      queueArn: queue.arn,
      region: options.region,
      handler: (event, context) => handlers.deliver(event, context),
      batchSize: deliveryBatchSize,
      concurrency,
      logger,
    });
  const delivery = mapping(
    queues.deliveries,
    options.pollers?.deliveries ?? options.sqs,
    options.deliveryConcurrency ?? 2,
  );
  // The retry queue's mapping, within its maximum concurrency (Lambda scales up to it).
  const retry = mapping(
    queues.retries,
    options.pollers?.retries ?? options.sqs,
    Math.min(retryMaximumConcurrency, options.retryConcurrency ?? 4),
  );
  return {
    deliveries: modules.deliveryQueue.sqsDeliveryQueue(options.sqs, queues.deliveries.url),
    stream,
    delivery,
    retry,
    fanout: (event) => handlers.fanout(event, { awsRequestId: randomUUID() }),
    prepare: (fresh) => {
      const built = build(fresh);
      return () => {
        handlers = built;
      };
    },
    stop: async () => {
      await Promise.all([stream.stop(), delivery.stop(), retry.stop()]);
    },
  };
}

/** The stage's subscriptions, as the stack writes them into the fan-out's `SUBSCRIPTIONS`. */
function subscriptionsOf(options: WebhookPipelineOptions, modules: PipelineModules) {
  return options.subscribers.map((subscriber) =>
    modules.plantEvents.subscriptionOf(subscriber.name, subscriber),
  );
}

/** The fan-out handler: the stage's subscriptions, and the endpoints' where there are some. */
function fanoutOf(options: WebhookPipelineOptions, modules: PipelineModules) {
  const { endpoints } = options;
  const subscriptions = subscriptionsOf(options, modules);
  return modules.fanout.createHandler({
    deliveries: modules.deliveryQueue.sqsDeliveryQueue(
      options.sqs,
      options.fanoutQueueUrl ?? options.queues.deliveries.url,
    ),
    subscriptions:
      endpoints === undefined
        ? modules.queueDeliveries.fixedSubscriptions(subscriptions)
        : modules.subscriptions.withEndpointSubscriptions(subscriptions, endpoints.stores),
    ...(endpoints === undefined
      ? {}
      : { eventLog: modules.webhookLog.eventLogOf(endpoints.stores) }),
    logger: options.logger,
  });
}

/** The delivery handler, as the stack configures it but for what a test shortens. */
function deliverOf(options: WebhookPipelineOptions, modules: PipelineModules) {
  const { endpoints } = options;
  return modules.deliver.createHandler({
    sqs: options.sqs,
    secretsManager: options.secretsManager,
    retryQueueUrl: options.queues.retries.url,
    deadLetterQueueUrl: options.queues.deadLetters.url,
    subscribers: options.subscribers.map(({ name, url, secretArn }) => ({ name, url, secretArn })),
    ...(endpoints === undefined ? {} : { endpoints }),
    ...(options.retrySchedule === undefined ? {} : { retrySchedule: options.retrySchedule }),
    ...(options.maximumDelaySeconds === undefined
      ? {}
      : { maximumDelaySeconds: options.maximumDelaySeconds }),
    ...(options.sendOptions === undefined ? {} : { sendOptions: options.sendOptions }),
    logger: options.logger,
  });
}
