/**
 * The deployed webhook path on a test bed: the table in DynamoDB Local with its stream, the
 * Deliveries, Retries and DeadLetters queues, the StreamFailures bucket and the subscribers' secrets in
 * moto, and the fan-out and delivery functions' handlers, unchanged, invoked by imitations of
 * Lambda's event source mappings. Settings as the stack makes them, except what a test shortens.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { DeleteTableCommand, DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { CreateKeyCommand } from '@aws-sdk/client-kms';
import { CreateBucketCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { CreateSecretCommand } from '@aws-sdk/client-secrets-manager';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../functions/shared/platform/dynamodb.ts';
import { createLogger, type Logger } from '../functions/shared/platform/logger.ts';
import type { EndpointStores } from '../functions/webhook-endpoints/endpoint-store.ts';
import type { EndpointUrlPolicy } from '../functions/webhook-endpoints/endpoint-url.ts';
import { kmsSecretBox, type SecretBox } from '../functions/webhook-endpoints/secret-box.ts';
import { deliveryMaxReceiveCount, workQueueSettings } from '../infra/webhook-pipeline-settings.ts';
import type { StreamFailureRecord } from '../local/pipeline/stream-batches.ts';
import type { RunningMapping } from '../local/pipeline/stream-mapping.ts';
import {
  importPipelineModules,
  type PipelineQueue,
  type PipelineSubscriber,
  startWebhookPipeline,
} from '../local/pipeline/webhook-pipeline.ts';
import {
  createPlantsTableIfMissing,
  createWebhookEndpointTablesIfMissing,
} from '../local/tables.ts';
import type { MotoServer } from './moto-server.ts';

export interface BedSubscriber {
  readonly name: string;
  readonly url: string;
  /** A secret ARN of its own (one that does not exist makes every attempt fail unexpectedly). */
  readonly secretArn?: string;
  /** What it hears of, as the stage config says it. @default plant.created in the plant format */
  readonly format?: 'plant' | 'event';
  readonly events?: readonly ('plant.created' | 'plant.updated' | 'plant.deleted')[];
}

export interface BedOptions {
  readonly moto: MotoServer;
  /** The DynamoDB Local (shared database) the bed makes its plants table in. */
  readonly dynamoDbUrl: string;
  /**
   * A second moto server for the Retries queue. SQS scales each queue on its own; one moto
   * process serves every queue on one core and scans a queue's messages on each call, so a busy
   * Retries queue would slow the Deliveries queue in the emulator as it never does in SQS.
   */
  readonly retryMoto?: MotoServer;
  readonly subscribers: readonly BedSubscriber[];
  /** The retry schedule in seconds (time-compressed). */
  readonly retrySchedule: readonly number[];
  /** The longest hop of a waiting retry, in seconds. @default 900 */
  readonly maximumDelaySeconds?: number;
  /** The delivery queue's visibility timeout. @default 180, as the stack sets it */
  readonly visibilityTimeoutSeconds?: number;
  /** The fan-out's queue; the bed's Deliveries queue by default (a wrong one fails the fan-out). */
  readonly fanoutQueueUrl?: string;
  readonly subscriberTimeoutMilliseconds?: number;
  readonly deliveryConcurrency?: number;
  /** Pollers of the retry queue (at most its maximum concurrency). @default 4 */
  readonly retryConcurrency?: number;
  /**
   * Webhook endpoints: their tables in DynamoDB Local, their key in moto's KMS, and the URL
   * policy (the deployed one, but that the bed's receivers are on this machine's loopback).
   */
  readonly endpoints?: {
    readonly urlPolicy: EndpointUrlPolicy;
    readonly now?: () => number;
  };
  readonly logger?: Logger;
}

/** The bed's endpoint stores and key, when it has endpoints. */
export interface BedEndpoints {
  /** The endpoints table and the webhook log. */
  readonly stores: EndpointStores;
  readonly secretBox: SecretBox;
}

/** The bed's plants table, with a client configured exactly as the functions'. */
export interface BedTable {
  readonly url: string;
  readonly tableName: string;
  readonly documentClient: DynamoDBDocumentClient;
}

export interface DeployedWebhooks {
  readonly table: BedTable;
  readonly secret: string;
  readonly deliveryQueueUrl: string;
  readonly deadLetterQueueUrl: string;
  readonly bucket: string;
  readonly retryQueueUrl: string;
  readonly delivery: RunningMapping;
  readonly retry: RunningMapping;
  readonly stream: RunningMapping;
  /** Where endpoints are kept, when the bed has them. */
  readonly endpoints: BedEndpoints | undefined;
  /** Messages received and not yet deleted, on both queues: SQS's in-flight count. */
  inFlight(): Promise<number>;
  /** The dead letters' bodies (received and left on the queue). */
  deadLetters(): Promise<Record<string, unknown>[]>;
  stop(): Promise<void>;
}

/**
 * Creates the queues, bucket and secrets in moto and a table, and starts the pipeline on them:
 * the fan-out's stream mapping and both of the delivery's SQS mappings.
 */
export async function startDeployedWebhooks(options: BedOptions): Promise<DeployedWebhooks> {
  const { moto } = options;
  const id = randomUUID().slice(0, 8);
  const logger = options.logger ?? createLogger({}, () => {});
  const queues = await createBedQueues(options, id);
  const bucket = `stream-failures-${id}`;
  await moto.s3.send(new CreateBucketCommand({ Bucket: bucket }));
  const secrets = await createBedSecrets(options, id);
  const table = await createBedTable(options, id);
  const endpoints =
    options.endpoints === undefined ? undefined : await startBedEndpoints(moto, table, id);
  const streams = new DynamoDBStreamsClient({
    endpoint: table.url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    requestHandler: { connectionTimeout: 1_000, requestTimeout: 5_000 },
  });
  const pipeline = await startWebhookPipeline(
    {
      sqs: queues.sqs,
      pollers: { deliveries: moto.sqs, retries: (options.retryMoto ?? moto).sqs },
      region: moto.region,
      queues,
      ...(options.fanoutQueueUrl === undefined ? {} : { fanoutQueueUrl: options.fanoutQueueUrl }),
      stream: {
        streams,
        streamArn: table.streamArn,
        startingPosition: 'TRIM_HORIZON',
        retryAttempts: 2,
        onFailure: s3FailureDestination(moto.s3, bucket),
      },
      secretsManager: moto.secretsManager,
      subscribers: secrets.subscribers,
      ...(endpoints === undefined || options.endpoints === undefined
        ? {}
        : { endpoints: { ...endpoints, ...options.endpoints } }),
      retrySchedule: options.retrySchedule,
      ...(options.maximumDelaySeconds === undefined
        ? {}
        : { maximumDelaySeconds: options.maximumDelaySeconds }),
      sendOptions: { timeoutMilliseconds: options.subscriberTimeoutMilliseconds ?? 2_000 },
      ...(options.deliveryConcurrency === undefined
        ? {}
        : { deliveryConcurrency: options.deliveryConcurrency }),
      ...(options.retryConcurrency === undefined
        ? {}
        : { retryConcurrency: options.retryConcurrency }),
      logger,
    },
    await importPipelineModules(),
  );
  return {
    table,
    secret: secrets.secret,
    deliveryQueueUrl: queues.deliveries.url,
    retryQueueUrl: queues.retries.url,
    deadLetterQueueUrl: queues.deadLetters.url,
    bucket,
    delivery: pipeline.delivery,
    retry: pipeline.retry,
    stream: pipeline.stream,
    endpoints,
    inFlight: () => inFlightOn(queues.sqs, [queues.deliveries, queues.retries]),
    deadLetters: async () => {
      const { Messages = [] } = await moto.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queues.deadLetters.url,
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 0,
        }),
      );
      return Messages.map((message) => JSON.parse(message.Body ?? 'null'));
    },
    stop: async () => {
      await pipeline.stop();
      streams.destroy();
      const tableNames = [
        table.tableName,
        ...(endpoints === undefined
          ? []
          : [endpoints.stores.endpointsTableName, endpoints.stores.logTableName]),
      ];
      for (const name of tableNames) {
        await table.documentClient.send(new DeleteTableCommand({ TableName: name }));
      }
      table.documentClient.destroy();
    },
  };
}

/**
 * DeadLetters, Deliveries and Retries, set as the stack sets them, and the functions' one SQS
 * client, as in Lambda: each call goes to the server of its queue.
 */
async function createBedQueues(options: BedOptions, id: string) {
  const { moto } = options;
  const retryMoto = options.retryMoto ?? moto;
  const createQueue = async (
    server: MotoServer,
    name: string,
    attributes: Record<string, string>,
  ) => {
    const { QueueUrl } = await server.sqs.send(
      new CreateQueueCommand({ QueueName: `${name}-${id}`, Attributes: attributes }),
    );
    const { Attributes } = await server.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
    );
    return { url: QueueUrl ?? '', arn: Attributes?.QueueArn ?? '' };
  };
  const deadLetters = await createQueue(moto, 'dead-letters', {});
  // A queue's redrive policy names a dead-letter queue on its own server.
  const retryDeadLetters =
    retryMoto === moto ? deadLetters : await createQueue(retryMoto, 'retry-dead-letters', {});
  const queueSettings = (deadLetterTargetArn: string) => ({
    VisibilityTimeout: String(
      options.visibilityTimeoutSeconds ?? workQueueSettings.visibilityTimeoutSeconds,
    ),
    RedrivePolicy: JSON.stringify({
      deadLetterTargetArn,
      maxReceiveCount: deliveryMaxReceiveCount,
    }),
  });
  const deliveries = await createQueue(moto, 'deliveries', queueSettings(deadLetters.arn));
  const retries = await createQueue(retryMoto, 'retries', queueSettings(retryDeadLetters.arn));
  const sqs = {
    send: ((command: { input: { QueueUrl?: string } }, sendOptions?: never) =>
      (command.input.QueueUrl === retries.url ? retryMoto.sqs : moto.sqs).send(
        command as never,
        sendOptions,
      )) as unknown as SQSClient['send'],
  };
  return { sqs, deadLetters, deliveries, retries };
}

/** Each subscriber's secret in moto (one secret text for all), unless it names its own. */
async function createBedSecrets(options: BedOptions, id: string) {
  const secretText = randomBytes(36).toString('base64');
  const subscribers: PipelineSubscriber[] = [];
  for (const subscriber of options.subscribers) {
    if (subscriber.secretArn !== undefined) {
      subscribers.push({ ...subscriber, secretArn: subscriber.secretArn });
      continue;
    }
    const { ARN } = await options.moto.secretsManager.send(
      new CreateSecretCommand({
        Name: `plant-store/test/${id}/${subscriber.name}`,
        SecretString: secretText,
      }),
    );
    subscribers.push({ ...subscriber, secretArn: ARN ?? '' });
  }
  return { subscribers, secret: `whsec_${secretText}` };
}

/** The plants table in DynamoDB Local, with its stream. */
async function createBedTable(
  options: BedOptions,
  id: string,
): Promise<BedTable & { streamArn: string }> {
  const table = {
    url: options.dynamoDbUrl,
    tableName: `plants-${id}`,
    documentClient: createDocumentClient({ url: options.dynamoDbUrl }),
  };
  // Made with patience: a JVM on a busy machine may take seconds for its first table, which the
  // functions' one-second attempts are not meant to wait for.
  const setup = createDocumentClient({
    url: options.dynamoDbUrl,
    requestTimeoutMilliseconds: 10_000,
  });
  try {
    await createPlantsTableIfMissing(setup, table.tableName);
    const { Table } = await setup.send(new DescribeTableCommand({ TableName: table.tableName }));
    return { ...table, streamArn: Table?.LatestStreamArn ?? '' };
  } finally {
    setup.destroy();
  }
}

/**
 * Lambda's S3 on-failure destination: each discarded batch's invocation record, one object under
 * `aws/lambda/<mapping>/<shard>/<date>/` ("Retaining discarded records").
 */
function s3FailureDestination(s3: S3Client, bucket: string) {
  const mappingId = randomUUID();
  return async (record: StreamFailureRecord) => {
    const date = record.timestamp.slice(0, 10).replaceAll('-', '/');
    const stamp = record.timestamp.slice(0, 19).replaceAll(':', '.');
    const shardId = record.DDBStreamBatchInfo.shardId;
    await s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: `aws/lambda/${mappingId}/${shardId}/${date}/${stamp}-${randomUUID()}`,
        Body: JSON.stringify(record),
      }),
    );
  };
}

/** Messages received and not yet deleted: SQS's in-flight count. */
async function inFlightOn(sqs: Pick<SQSClient, 'send'>, queues: readonly PipelineQueue[]) {
  let total = 0;
  for (const queue of queues) {
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: queue.url,
        AttributeNames: ['ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    total += Number(Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
  }
  return total;
}

/** The endpoint tables beside the plants table, and a KMS key in moto sealing the secrets. */
async function startBedEndpoints(
  moto: MotoServer,
  plants: BedTable,
  id: string,
): Promise<BedEndpoints> {
  const names = { endpoints: `webhook-endpoints-${id}`, log: `webhook-log-${id}` };
  await createWebhookEndpointTablesIfMissing(plants.documentClient, names);
  const { KeyMetadata } = await moto.kms.send(
    new CreateKeyCommand({ Description: `plant-store test ${id} endpoint secrets` }),
  );
  const { documentClient } = plants;
  return {
    stores: { documentClient, endpointsTableName: names.endpoints, logTableName: names.log },
    secretBox: kmsSecretBox(moto.kms, KeyMetadata?.KeyId ?? '', {
      documentClient,
      tableName: names.endpoints,
    }),
  };
}
