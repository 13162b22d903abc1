/**
 * `npm start`'s webhooks: the deployed pipeline (`pipeline/webhook-pipeline.ts`: the fan-out and
 * delivery handlers, unchanged, behind imitations of Lambda's mappings) on DynamoDB Local's stream
 * and this process's own queues. The stage-like subscribers' secrets are held in memory as
 * Secrets Manager would hold them; the endpoints' log is in DynamoDB Local, as deployed.
 *
 * The queues are saved to the data folder when `npm start` stops and taken up again when it next
 * starts, so a waiting retry or a dead letter outlives a restart (not a killed process). Reading
 * the stream starts at its end: a plant stored while `npm start` was stopped is not sent.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import * as sqsCommands from '@aws-sdk/client-sqs';
import {
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { localStoreSettings } from '../functions/shared/platform/dynamodb.ts';
import type { Logger } from '../functions/shared/platform/logger.ts';
import {
  bundleMembers,
  type DeadLetterMessage,
} from '../functions/shared/webhooks/delivery-message.ts';
import {
  createSqsClient,
  type DeliveryQueue,
} from '../functions/shared/webhooks/delivery-queue.ts';
import type { Subscription, Webhook } from '../functions/shared/webhooks/plant-events.ts';
import type { Subscriber } from '../functions/shared/webhooks/send-webhook.ts';
import type { EndpointDeliveryDependencies } from '../functions/webhook-endpoints/endpoint-targets.ts';
import {
  deadLetterQueueSettings,
  deliveryMaxReceiveCount,
  workQueueSettings,
} from '../infra/webhook-pipeline-settings.ts';
import { startKeptBatchReplay } from './pipeline/kept-batch-replay.ts';
import { type MemoryQueues, memoryQueues } from './pipeline/memory-queues.ts';
import type { StreamFailureRecord } from './pipeline/stream-batches.ts';
import { importPipelineModules, startWebhookPipeline } from './pipeline/webhook-pipeline.ts';

export interface LocalWebhooksOptions {
  /** DynamoDB Local (or another store with streams). */
  readonly storeUrl: string;
  /** The credentials whose database holds the table (DynamoDB Local keeps one per key id). */
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
  readonly documentClient: DynamoDBDocumentClient;
  readonly tableName: string;
  /** The table's stream, when the caller has read it already. @default read from the table */
  readonly streamArn?: string;
  /** Each with what it hears of and in which format. */
  readonly subscribers: readonly LocalSubscriber[];
  /** The webhook endpoints' stores, key and URL policy, when clients may register endpoints. */
  readonly endpoints?: EndpointDeliveryDependencies;
  /** Seconds before each retry; the product's schedule by default (tests shorten it). */
  readonly retrySchedule?: readonly number[];
  /** How long a subscriber may take to answer. @default 10000 */
  readonly timeoutMilliseconds?: number;
  /** How long to wait after an empty read of the stream. @default 100 */
  readonly pollIntervalMilliseconds?: number;
  /**
   * Where the queues are saved at a stop and the stream batches the fan-out gave up on are kept;
   * nowhere when absent (then a kept batch is logged).
   */
  readonly dataDirectory?: string;
  /**
   * While this answers true, SendMessage and SendMessageBatch fail as SQS's do when it is
   * unavailable (503): for the fault-injection tier (`test/faults/`). @default never
   */
  readonly refuseSends?: () => boolean;
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

export interface LocalWebhooks {
  /** Where the endpoints' test events and recovered events are queued. */
  readonly deliveries: DeliveryQueue;
  /** The DeadLetters queue's deliveries, oldest first. */
  deadLetters(): readonly DeadLetter[];
  /**
   * Builds the fan-out and delivery handlers again from modules `importModule` brings, and
   * returns what puts them in use.
   */
  prepareReload(importModule: (url: URL) => Promise<unknown>): Promise<() => void>;
  /** Moves every dead letter to the Deliveries queue, as the runbook's command does. */
  redriveDeadLetters(): Promise<number>;
  /** Stops the mappings (cutting short the attempts under way) and saves the queues. */
  stop(): Promise<void>;
}

const region = 'us-east-1';

/** Starts reading the stream at its end. @throws when the table has no stream. */
export async function startLocalWebhooks(options: LocalWebhooksOptions): Promise<LocalWebhooks> {
  const queueFile =
    options.dataDirectory === undefined ? undefined : join(options.dataDirectory, 'queues.json');
  const queues = memoryQueues({ region, ...(queueFile === undefined ? {} : { file: queueFile }) });
  const { deliveries, retries, deadLetters } = createQueues(queues);
  const sqs = refusing(queues.sqs, options.refuseSends);
  const streams = streamsClientOf(options);
  const stopping = new AbortController();
  try {
    const pipeline = await startWebhookPipeline(
      {
        sqs: functionsClient(sqs),
        // Lambda's pollers call the queues themselves (and a stop cuts their long polls short).
        pollers: { deliveries: sqs, retries: sqs },
        region,
        queues: { deliveries, retries, deadLetters },
        stream: {
          streams,
          streamArn: await streamArnOf(options),
          startingPosition: 'LATEST',
          ...(options.dataDirectory === undefined
            ? {}
            : { checkpointFile: join(options.dataDirectory, 'stream-checkpoint.json') }),
          onFailure: keepStreamFailure(options),
          ...(options.pollIntervalMilliseconds === undefined
            ? {}
            : { pollIntervalMilliseconds: options.pollIntervalMilliseconds }),
        },
        ...heldSecrets(options.subscribers),
        ...(options.endpoints === undefined ? {} : { endpoints: options.endpoints }),
        ...(options.retrySchedule === undefined ? {} : { retrySchedule: options.retrySchedule }),
        sendOptions: {
          timeoutMilliseconds: options.timeoutMilliseconds ?? 10_000,
          signal: stopping.signal,
        },
        logger: options.logger,
      },
      await importPipelineModules(),
    );
    const replay =
      options.dataDirectory === undefined
        ? undefined
        : startKeptBatchReplay({
            folder: join(options.dataDirectory, 'stream-failures'),
            fanout: (event) => pipeline.fanout(event),
            logger: options.logger,
          });
    return {
      deliveries: pipeline.deliveries,
      prepareReload: async (importModule) =>
        pipeline.prepare(await importPipelineModules(importModule)),
      deadLetters: () => queues.bodies(deadLetters.url).flatMap(deadLettersOf),
      redriveDeadLetters: async () => {
        const count = queues.bodies(deadLetters.url).flatMap(deadLettersOf).length;
        await queues.sqs.send(
          new StartMessageMoveTaskCommand({
            SourceArn: deadLetters.arn,
            DestinationArn: deliveries.arn,
          }),
        );
        return count;
      },
      stop: async () => {
        stopping.abort();
        await replay?.stop();
        await pipeline.stop();
        queues.close();
        streams.destroy();
      },
    };
  } catch (error) {
    queues.close();
    streams.destroy();
    throw error;
  }
}

/**
 * The functions' own SQS client (`createSqsClient`: where spans are sent, a span for each call
 * and the send's `traceparent` on its messages), each call answered by `sqs`, the queues here.
 */
function functionsClient(sqs: MemoryQueues['sqs']): SQSClient {
  const client = createSqsClient();
  const commands = sqsCommands as unknown as Record<string, new (input: never) => unknown>;
  const answered =
    (_next: unknown, { commandName }: { commandName: string }) =>
    async ({ input }: { input: never }) => {
      const Command = commands[commandName];
      if (Command === undefined) throw new Error(`The local queues do not answer ${commandName}.`);
      const send = sqs.send as (command: unknown) => Promise<unknown>;
      return { output: await send(new Command(input)), response: {} };
    };
  // Last of its step, below the spans' middleware: nothing is signed or sent over HTTP.
  client.middlewareStack.add(answered as never, {
    step: 'initialize',
    priority: 'low',
    name: 'localQueues',
  });
  return client;
}

/** `sqs`, its sends failing with SQS's 503 while `refuseSends` says so. */
function refusing(sqs: MemoryQueues['sqs'], refuseSends?: () => boolean): MemoryQueues['sqs'] {
  if (refuseSends === undefined) return sqs;
  const send = async (command: unknown, ...rest: unknown[]) => {
    const isSend =
      command instanceof SendMessageCommand || command instanceof SendMessageBatchCommand;
    if (isSend && refuseSends()) {
      throw Object.assign(new Error('Service Unavailable'), {
        name: 'ServiceUnavailable',
        $fault: 'server',
        $metadata: { httpStatusCode: 503 },
      });
    }
    return (sqs.send as (...parameters: unknown[]) => Promise<unknown>)(command, ...rest);
  };
  return { send: send as unknown as MemoryQueues['sqs']['send'] };
}

/** The stack's three queues, the dead letters behind both others. */
function createQueues(queues: MemoryQueues) {
  const deadLetters = queues.create('DeadLetters', {
    visibilityTimeoutSeconds: 30,
    ...deadLetterQueueSettings,
  });
  const work = {
    ...workQueueSettings,
    deadLetter: { queueArn: deadLetters.arn, maxReceiveCount: deliveryMaxReceiveCount },
  };
  return {
    deadLetters,
    deliveries: queues.create('Deliveries', work),
    retries: queues.create('Retries', work),
  };
}

/** The subscribers as the stack configures them, their secrets held here by ARN. */
function heldSecrets(subscribers: readonly LocalSubscriber[]) {
  const secrets = new Map<string, string>();
  const configured = subscribers.map((subscriber) => {
    const secretArn = `arn:aws:secretsmanager:${region}:000000000000:secret:npm-start/${subscriber.name}`;
    secrets.set(secretArn, subscriber.secret);
    return { ...subscriber, secretArn };
  });
  const secretsManager: Pick<SecretsManagerClient, 'send'> = {
    send: (async (command: unknown) => {
      const secretId = command instanceof GetSecretValueCommand ? command.input.SecretId : '';
      const secret = secrets.get(secretId ?? '');
      if (secret === undefined) {
        throw Object.assign(new Error(`No secret ${secretId}.`), {
          name: 'ResourceNotFoundException',
        });
      }
      return { SecretString: secret, $metadata: {} };
    }) as never,
  };
  return { subscribers: configured, secretsManager };
}

/** Where the fan-out's batches go once Lambda would give up: a file, or else the log. */
function keepStreamFailure(options: LocalWebhooksOptions) {
  return async (record: StreamFailureRecord) => {
    const { batchSize, startSequenceNumber } = record.DDBStreamBatchInfo;
    if (options.dataDirectory === undefined) {
      options.logger.error('stream batch discarded after its retries', { record });
      return;
    }
    const folder = join(options.dataDirectory, 'stream-failures');
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    const file = join(folder, `${record.timestamp.replaceAll(':', '.')}-${randomUUID()}.json`);
    // Whole or not at all: the replay reads every .json file of the folder.
    writeFileSync(`${file}.partial`, JSON.stringify(record, null, 2), { mode: 0o600 });
    renameSync(`${file}.partial`, file);
    options.logger.warn('stream batch kept after its retries; it is replayed on its own', {
      file,
      records: batchSize,
      from: startSequenceNumber,
    });
  };
}

/** A dead letter's body as `npm start` shows it: a bundle SQS moved itself is each of its own. */
function deadLettersOf(body: string): DeadLetter[] {
  const json: unknown = JSON.parse(body);
  return (bundleMembers(json) ?? [json]).map((letter) =>
    deadLetterOf(letter as Partial<DeadLetterMessage>),
  );
}

function deadLetterOf(letter: Partial<DeadLetterMessage>): DeadLetter {
  const { webhookId = '', payload = '', version } = letter;
  return {
    event: { webhookId, payload, ...(version === undefined ? {} : { version }) },
    subscriber: letter.subscriber ?? '',
    attempts: letter.attempts ?? letter.attempt ?? 0,
    // A message SQS moved itself: its handling failed on every receive.
    lastFailure: letter.lastFailure ?? `not handled in ${deliveryMaxReceiveCount} receives`,
    failedAt: letter.failedAt ?? '',
  };
}

async function streamArnOf(options: LocalWebhooksOptions): Promise<string> {
  if (options.streamArn !== undefined) return options.streamArn;
  const { Table } = await options.documentClient.send(
    new DescribeTableCommand({ TableName: options.tableName }),
  );
  const streamArn = Table?.LatestStreamArn;
  if (streamArn === undefined) throw new Error(`The table ${options.tableName} has no stream.`);
  return streamArn;
}

/** A client of the store's streams API, with the credentials whose database holds the table. */
function streamsClientOf(options: LocalWebhooksOptions): DynamoDBStreamsClient {
  return new DynamoDBStreamsClient({
    ...localStoreSettings(options.storeUrl, options.credentials),
    // A paused or hung store fails a read (retried a second later) rather than hold it, and a stop.
    requestHandler: { connectionTimeout: 1_000, requestTimeout: 5_000 },
  });
}
