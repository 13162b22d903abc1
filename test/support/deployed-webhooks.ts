/**
 * The deployed webhook path on a test bed: the table in DynamoDB Local with its stream, the
 * Deliveries, Retries and DeadLetters queues, the StreamFailures bucket and the subscribers' secrets in
 * moto, and the fan-out and delivery functions' handlers, unchanged, invoked by imitations of
 * Lambda's event source mappings. Settings as the stack makes them, except what a test shortens.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { CreateSecretCommand } from '@aws-sdk/client-secrets-manager';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
} from '@aws-sdk/client-sqs';
import { createDeliverHandler } from '../../functions/deliver-webhook/deliver-handler.ts';
import { createLogger, type Logger } from '../../functions/shared/logger.ts';
import { createFanoutHandler } from '../../functions/webhook-fanout/fanout-handler.ts';
import { deliveryMaxReceiveCount, retryMaximumConcurrency } from '../../infra/plant-webhooks.ts';
import {
  type RunningMapping,
  startSqsMapping,
  startStreamMapping,
} from './event-source-mappings.ts';
import type { MotoServer } from './moto-server.ts';
import { createTestTable, type TestTable } from './test-store.ts';

export interface BedSubscriber {
  readonly name: string;
  readonly url: string;
  /** A secret ARN of its own (one that does not exist makes every attempt fail unexpectedly). */
  readonly secretArn?: string;
}

export interface BedOptions {
  readonly moto: MotoServer;
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
  readonly logger?: Logger;
}

export interface DeployedWebhooks {
  readonly table: TestTable;
  readonly secret: string;
  readonly deliveryQueueUrl: string;
  readonly deadLetterQueueUrl: string;
  readonly bucket: string;
  readonly retryQueueUrl: string;
  readonly delivery: RunningMapping;
  readonly retry: RunningMapping;
  readonly stream: RunningMapping;
  /** Messages received and not yet deleted, on both queues: SQS's in-flight count. */
  inFlight(): Promise<number>;
  /** The dead letters' bodies (received and left on the queue). */
  deadLetters(): Promise<Record<string, unknown>[]>;
  stop(): Promise<void>;
}

/** Creates the queues, bucket and secrets in moto and a table, and starts both mappings. */
export async function startDeployedWebhooks(options: BedOptions): Promise<DeployedWebhooks> {
  const { moto } = options;
  const id = randomUUID().slice(0, 8);
  const secretText = randomBytes(36).toString('base64');
  const logger = options.logger ?? createLogger({}, () => {});
  const createQueue = async (name: string, attributes: Record<string, string>) => {
    const { QueueUrl } = await moto.sqs.send(
      new CreateQueueCommand({ QueueName: `${name}-${id}`, Attributes: attributes }),
    );
    const { Attributes } = await moto.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
    );
    return { url: QueueUrl ?? '', arn: Attributes?.QueueArn ?? '' };
  };
  const deadLetters = await createQueue('dead-letters', {});
  const queueSettings = {
    VisibilityTimeout: String(options.visibilityTimeoutSeconds ?? 180),
    RedrivePolicy: JSON.stringify({
      deadLetterTargetArn: deadLetters.arn,
      maxReceiveCount: deliveryMaxReceiveCount,
    }),
  };
  const deliveries = await createQueue('deliveries', queueSettings);
  const retries = await createQueue('retries', queueSettings);
  const bucket = `stream-failures-${id}`;
  await moto.s3.send(new CreateBucketCommand({ Bucket: bucket }));
  const subscribers: { name: string; url: string; secretArn: string }[] = [];
  for (const subscriber of options.subscribers) {
    if (subscriber.secretArn !== undefined) {
      subscribers.push({ ...subscriber, secretArn: subscriber.secretArn });
      continue;
    }
    const { ARN } = await moto.secretsManager.send(
      new CreateSecretCommand({
        Name: `plant-store/test/${id}/${subscriber.name}`,
        SecretString: secretText,
      }),
    );
    subscribers.push({ ...subscriber, secretArn: ARN ?? '' });
  }

  const table = await createTestTable();
  const { Table } = await table.documentClient.send(
    new DescribeTableCommand({ TableName: table.tableName }),
  );
  const streams = new DynamoDBStreamsClient({
    endpoint: table.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const fanout = createFanoutHandler({
    sqs: moto.sqs,
    deliveryQueueUrl: options.fanoutQueueUrl ?? deliveries.url,
    subscriberNames: options.subscribers.map((subscriber) => subscriber.name),
    logger,
  });
  const deliver = createDeliverHandler({
    sqs: moto.sqs,
    secretsManager: moto.secretsManager,
    retryQueueUrl: retries.url,
    deadLetterQueueUrl: deadLetters.url,
    subscribers,
    retrySchedule: options.retrySchedule,
    ...(options.maximumDelaySeconds === undefined
      ? {}
      : { maximumDelaySeconds: options.maximumDelaySeconds }),
    sendOptions: { timeoutMilliseconds: options.subscriberTimeoutMilliseconds ?? 2_000 },
    logger,
  });
  const stream = await startStreamMapping({
    streams,
    streamArn: Table?.LatestStreamArn ?? '',
    handler: fanout,
    retryAttempts: 2,
    onFailure: { s3: moto.s3, bucket },
  });
  const delivery = startSqsMapping({
    sqs: moto.sqs,
    queueUrl: deliveries.url,
    queueArn: deliveries.arn,
    region: moto.region,
    handler: deliver,
    concurrency: options.deliveryConcurrency ?? 2,
  });
  // The retry queue's mapping, at its maximum concurrency (as the stack sets it).
  const retry = startSqsMapping({
    sqs: moto.sqs,
    queueUrl: retries.url,
    queueArn: retries.arn,
    region: moto.region,
    handler: deliver,
    concurrency: retryMaximumConcurrency,
  });
  return {
    table,
    secret: `whsec_${secretText}`,
    deliveryQueueUrl: deliveries.url,
    retryQueueUrl: retries.url,
    deadLetterQueueUrl: deadLetters.url,
    bucket,
    delivery,
    retry,
    stream,
    inFlight: async () => {
      let total = 0;
      for (const queue of [deliveries, retries]) {
        const { Attributes } = await moto.sqs.send(
          new GetQueueAttributesCommand({
            QueueUrl: queue.url,
            AttributeNames: ['ApproximateNumberOfMessagesNotVisible'],
          }),
        );
        total += Number(Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
      }
      return total;
    },
    deadLetters: async () => {
      const { Messages = [] } = await moto.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: deadLetters.url,
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 0,
        }),
      );
      return Messages.map((message) => JSON.parse(message.Body ?? 'null'));
    },
    stop: async () => {
      await Promise.all([stream.stop(), delivery.stop(), retry.stop()]);
      streams.destroy();
      await table.remove();
    },
  };
}
