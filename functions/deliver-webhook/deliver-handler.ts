/**
 * The webhook delivery: each message of the delivery queue is one event for one subscriber.
 * Delivered, the message is done. Failed, the message is hidden for the schedule's next wait
 * (`ChangeMessageVisibility`, up to 12 h, enough for the 10 h steps) and reported as a batch
 * item failure, so SQS hands it back then; the receive count is the attempt number. After the
 * last attempt it goes to the dead-letter queue with its last failure. The messages of a batch
 * are delivered concurrently, and every message waits on its own, so a slow or failing
 * subscriber holds up no other delivery.
 */
import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import {
  ChangeMessageVisibilityCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { createLogger, type Logger } from '../shared/logger.ts';
import {
  type DeadLetterMessage,
  type DeliveryMessage,
  parseDeliveryMessage,
} from '../webhooks/delivery-message.ts';
import {
  defaultRetrySchedule,
  nextStepAfter,
  type SendOptions,
  sendWebhook,
} from '../webhooks/send-webhook.ts';

/** A subscriber as the stack configures the function: its secret stays in Secrets Manager. */
export interface ConfiguredSubscriber {
  readonly name: string;
  readonly url: string;
  readonly secretArn: string;
}

export interface DeliverDependencies {
  readonly sqs: Pick<SQSClient, 'send'>;
  readonly secretsManager: Pick<SecretsManagerClient, 'send'>;
  readonly deliveryQueueUrl: string;
  readonly deadLetterQueueUrl: string;
  readonly subscribers: readonly ConfiguredSubscriber[];
  readonly retrySchedule?: readonly number[];
  readonly sendOptions?: SendOptions;
  readonly logger?: Logger;
  readonly now?: () => number;
}

/** How long a subscriber's secret is reused before it is read again (after a rotation). */
const secretCacheMilliseconds = 5 * 60 * 1000;

/** Builds the handler around its dependencies (tests bring their own). */
export function createDeliverHandler(dependencies: DeliverDependencies) {
  const logger = dependencies.logger ?? createLogger({ service: 'deliver-webhook' });
  const now = dependencies.now ?? Date.now;
  const schedule = dependencies.retrySchedule ?? defaultRetrySchedule;
  const secrets = new Map<string, { value: string; readAt: number }>();

  const secretOf = async (subscriber: ConfiguredSubscriber): Promise<string> => {
    const cached = secrets.get(subscriber.secretArn);
    if (cached !== undefined && now() - cached.readAt < secretCacheMilliseconds)
      return cached.value;
    const { SecretString } = await dependencies.secretsManager.send(
      new GetSecretValueCommand({ SecretId: subscriber.secretArn }),
    );
    if (SecretString === undefined) throw new Error(`The secret of ${subscriber.name} is empty.`);
    // Secrets Manager holds the key's base64 text; the Standard Webhooks form adds the prefix.
    const value = SecretString.startsWith('whsec_') ? SecretString : `whsec_${SecretString}`;
    secrets.set(subscriber.secretArn, { value, readAt: now() });
    return value;
  };

  /** Delivers one message; `true` when it is done with (delivered or dead-lettered). */
  const deliver = async (record: SQSRecord): Promise<boolean> => {
    const message = parseDeliveryMessage(record.body);
    const subscriber = dependencies.subscribers.find(
      (candidate) => candidate.name === message?.subscriber,
    );
    if (message === undefined || subscriber === undefined) {
      // Nothing could ever deliver it (a subscriber removed from the stage): keep it, visibly.
      await deadLetter(
        message ?? { webhookId: '', payload: record.body, subscriber: '' },
        0,
        'no such subscriber or message',
      );
      return true;
    }
    const attempt = Number(record.attributes.ApproximateReceiveCount) || 1;
    const outcome = await sendWebhook(
      message,
      { name: subscriber.name, url: subscriber.url, secret: await secretOf(subscriber) },
      dependencies.sendOptions,
    );
    const step = nextStepAfter(
      outcome,
      { webhookId: message.webhookId, subscriber: subscriber.name, attempt },
      logger,
      schedule,
    );
    if (step.kind === 'delivered') return true;
    if (step.kind === 'dead-letter') {
      await deadLetter(message, attempt, step.failure);
      return true;
    }
    await dependencies.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: dependencies.deliveryQueueUrl,
        ReceiptHandle: record.receiptHandle,
        VisibilityTimeout: Math.ceil(step.delaySeconds),
      }),
    );
    return false;
  };

  const deadLetter = async (message: DeliveryMessage, attempts: number, lastFailure: string) => {
    const letter: DeadLetterMessage = {
      ...message,
      attempts,
      lastFailure,
      failedAt: new Date(now()).toISOString(),
    };
    await dependencies.sqs.send(
      new SendMessageCommand({
        QueueUrl: dependencies.deadLetterQueueUrl,
        MessageBody: JSON.stringify(letter),
      }),
    );
  };

  return async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const outcomes = await Promise.allSettled(event.Records.map(deliver));
    const batchItemFailures = event.Records.flatMap((record, index) => {
      const outcome = outcomes[index];
      if (outcome?.status === 'fulfilled' && outcome.value) return [];
      if (outcome?.status === 'rejected') {
        // An AWS call failed: SQS hands the message back after the queue's visibility timeout.
        logger.error('webhook delivery failed unexpectedly', { error: outcome.reason });
      }
      return [{ itemIdentifier: record.messageId }];
    });
    return { batchItemFailures };
  };
}

/** The configuration from the environment; anything missing fails the cold start. */
export function readDeliverConfig(environment: NodeJS.ProcessEnv) {
  const deliveryQueueUrl = environment.DELIVERY_QUEUE_URL;
  const deadLetterQueueUrl = environment.DEAD_LETTER_QUEUE_URL;
  const subscribers: unknown = JSON.parse(environment.SUBSCRIBERS ?? 'null');
  const valid =
    Array.isArray(subscribers) &&
    subscribers.every(
      (entry) =>
        typeof entry?.name === 'string' &&
        typeof entry?.url === 'string' &&
        typeof entry?.secretArn === 'string',
    );
  if (!deliveryQueueUrl || !deadLetterQueueUrl || !valid) {
    throw new Error(
      'deliver-webhook: DELIVERY_QUEUE_URL, DEAD_LETTER_QUEUE_URL and SUBSCRIBERS ' +
        '(a JSON array of {name, url, secretArn}) are required',
    );
  }
  return {
    deliveryQueueUrl,
    deadLetterQueueUrl,
    subscribers: subscribers as ConfiguredSubscriber[],
  };
}
