/**
 * The webhook delivery: each message of the delivery and retry queues is one attempt of one
 * event for one subscriber, delivered concurrently with its batch. A failed attempt sends the
 * next one to the retry queue, delayed until it is due (docs/decisions/
 * retries-as-delayed-messages.md; a hop where SQS's 15-minute limit is shorter); after the last,
 * the delivery goes to the dead-letter queue with its last failure.
 */
import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SendMessageBatchCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import {
  createLogger,
  type InvocationContext,
  invocationLoggers,
  type Logger,
} from '../shared/platform/logger.ts';
import {
  attemptDelivery,
  combinedTargets,
  type DeliveryStep,
  type StageSubscriber,
  stageSubscriberTargets,
} from '../shared/webhooks/attempt-delivery.ts';
import {
  type DeadLetterMessage,
  type DeliveryMessage,
  firstDeliveryMessage,
  parseDeliveryMessage,
} from '../shared/webhooks/delivery-message.ts';
import type { SendOptions } from '../shared/webhooks/send-webhook.ts';
import {
  type EndpointDeliveryDependencies,
  endpointTargets,
} from '../webhook-endpoints/endpoint-targets.ts';

/** A subscriber as the stack configures the function: its secret stays in Secrets Manager. */
export interface ConfiguredSubscriber {
  readonly name: string;
  readonly url: string;
  readonly secretArn: string;
}

export interface DeliverDependencies {
  readonly sqs: Pick<SQSClient, 'send'>;
  readonly secretsManager: Pick<SecretsManagerClient, 'send'>;
  /** Where later attempts and hops wait (first attempts arrive on the delivery queue). */
  readonly retryQueueUrl: string;
  readonly deadLetterQueueUrl: string;
  readonly subscribers: readonly ConfiguredSubscriber[];
  /** The webhook endpoints' stores, where the stage has them (and their clock, in tests). */
  readonly endpoints?: EndpointDeliveryDependencies;
  readonly retrySchedule?: readonly number[];
  readonly sendOptions?: SendOptions;
  readonly logger?: Logger;
  readonly now?: () => number;
  /** SQS's longest delay, in seconds (tests shorten it to see hops). */
  readonly maximumDelaySeconds?: number;
}

/** SQS delays a message at most 15 minutes. */
export const maximumDelaySeconds = 900;

/** How long a subscriber's secret is reused before it is read again (after a rotation). */
const secretCacheMilliseconds = 5 * 60 * 1000;

/** The configured subscribers, each reading its secret from Secrets Manager (kept 5 minutes). */
function secretsManagerSubscribers(
  dependencies: Pick<DeliverDependencies, 'subscribers' | 'secretsManager'>,
  now: () => number,
): StageSubscriber[] {
  const secrets = new Map<string, { value: string; readAt: number }>();
  return dependencies.subscribers.map((subscriber) => ({
    name: subscriber.name,
    url: subscriber.url,
    secret: async () => {
      const cached = secrets.get(subscriber.secretArn);
      if (cached !== undefined && now() - cached.readAt < secretCacheMilliseconds) {
        return cached.value;
      }
      const { SecretString } = await dependencies.secretsManager.send(
        new GetSecretValueCommand({ SecretId: subscriber.secretArn }),
      );
      if (SecretString === undefined) throw new Error(`The secret of ${subscriber.name} is empty.`);
      // Secrets Manager holds the key's base64 text; the Standard Webhooks form adds the prefix.
      const value = SecretString.startsWith('whsec_') ? SecretString : `whsec_${SecretString}`;
      secrets.set(subscriber.secretArn, { value, readAt: now() });
      return value;
    },
  }));
}

export function createHandler(dependencies: DeliverDependencies) {
  const loggerOf = invocationLoggers(
    dependencies.logger ?? createLogger({ service: 'deliver-webhook' }),
  );
  const now = dependencies.now ?? Date.now;
  const deliver = deliveryOf(dependencies, now);
  const sendForLater = laterSenderOf(dependencies, now);
  const deadLetter = deadLetterSenderOf(dependencies, now);

  return async (event: SQSEvent, context?: InvocationContext): Promise<SQSBatchResponse> => {
    const logger = loggerOf(context);
    const outcomes = await Promise.allSettled(
      event.Records.map(async (record) => {
        const step = await deliver(record.body, logger);
        if (step.kind === 'dead-letter') {
          await deadLetter(step.message, step.attempts, step.failure);
          return undefined;
        }
        return step.kind === 'later' ? step.message : undefined;
      }),
    );
    const refused = await sendForLater(
      outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : undefined)),
      logger,
    );
    const batchItemFailures = event.Records.flatMap((record, index) => {
      const outcome = outcomes[index];
      if (outcome?.status === 'fulfilled' && !refused.has(index)) return [];
      // An AWS call failed: SQS hands the message back after the queue's visibility timeout,
      // for the same attempt (the queue's redrive policy ends a message that keeps failing).
      if (outcome?.status === 'rejected') {
        logger.error('webhook delivery failed unexpectedly', { error: outcome.reason });
      }
      return [{ itemIdentifier: record.messageId }];
    });
    return { batchItemFailures };
  };
}

/** One message's turn; a body that is no message goes to the dead letters as it is. */
function deliveryOf(dependencies: DeliverDependencies, now: () => number) {
  const stage = stageSubscriberTargets(secretsManagerSubscribers(dependencies, now));
  const endpoints =
    dependencies.endpoints === undefined
      ? undefined
      : endpointTargets({ now, ...dependencies.endpoints });
  return (body: string, logger: Logger): Promise<DeliveryStep> => {
    const message = parseDeliveryMessage(body, now());
    if (message === undefined) {
      const unreadable = firstDeliveryMessage({ webhookId: '', payload: body }, '', now());
      return Promise.resolve({
        kind: 'dead-letter',
        message: unreadable,
        attempts: 0,
        failure: 'not a delivery message',
      });
    }
    return attemptDelivery(message, combinedTargets(stage, endpoints?.(logger)), {
      logger,
      ...(dependencies.retrySchedule === undefined ? {} : { schedule: dependencies.retrySchedule }),
      ...(dependencies.sendOptions === undefined ? {} : { sendOptions: dependencies.sendOptions }),
      now,
    });
  };
}

/**
 * Sends the messages for later to the retry queue, ten to a request, each delayed until it is
 * due or by SQS's maximum of 15 minutes, whichever is sooner (a longer wait takes hops).
 * Resolves with the indexes of those SQS did not take.
 */
function laterSenderOf(dependencies: DeliverDependencies, now: () => number) {
  const longestHop = dependencies.maximumDelaySeconds ?? maximumDelaySeconds;
  return async (later: readonly (DeliveryMessage | undefined)[], logger: Logger) => {
    const entries = later.flatMap((message, index) =>
      message === undefined
        ? []
        : [
            {
              Id: String(index),
              MessageBody: JSON.stringify(message),
              DelaySeconds: Math.min(
                Math.max(Math.ceil((message.dueAt - now()) / 1000), 0),
                longestHop,
              ),
            },
          ],
    );
    const refused = new Set<number>();
    for (let start = 0; start < entries.length; start += 10) {
      const batch = entries.slice(start, start + 10);
      try {
        const { Failed = [] } = await dependencies.sqs.send(
          new SendMessageBatchCommand({ QueueUrl: dependencies.retryQueueUrl, Entries: batch }),
        );
        for (const failure of Failed) refused.add(Number(failure.Id));
      } catch (error) {
        logger.error('could not queue webhook retries', { error });
        for (const entry of batch) refused.add(Number(entry.Id));
      }
    }
    return refused;
  };
}

/** Sends a delivery whose attempts are used up to the dead letters, with its last failure. */
function deadLetterSenderOf(dependencies: DeliverDependencies, now: () => number) {
  return async (message: DeliveryMessage, attempts: number, lastFailure: string) => {
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
}
