/**
 * The webhook delivery: each queued delivery is one attempt, a batch's side by side; a failed one
 * sends the next to the retry queue, delayed until due, and the last to the dead letters.
 */
import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SendMessageBatchCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { backgroundMarginMilliseconds, budgeted } from '../shared/platform/invocation-budget.ts';
import {
  createLogger,
  type InvocationContext,
  invocationLoggers,
  type Logger,
} from '../shared/platform/logger.ts';
import { flushSpans, inSpan } from '../shared/platform/spans.ts';
import { childOf, parseTraceparent } from '../shared/platform/trace-context.ts';
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
  deliveryMessageBody,
  firstDeliveryMessage,
  parseDeliveryMessages,
} from '../shared/webhooks/delivery-message.ts';
import type { SendOptions } from '../shared/webhooks/send-webhook.ts';
import {
  type EndpointDeliveryDependencies,
  endpointTargets,
} from '../webhook-endpoints/endpoint-targets.ts';

/** A stage subscriber: its secret stays in Secrets Manager. */
export interface ConfiguredSubscriber {
  readonly name: string;
  readonly url: string;
  readonly secretArn: string;
}

export interface DeliverDependencies {
  readonly sqs: Pick<SQSClient, 'send'>;
  readonly secretsManager: Pick<SecretsManagerClient, 'send'>;
  readonly retryQueueUrl: string;
  readonly deadLetterQueueUrl: string;
  readonly subscribers: readonly ConfiguredSubscriber[];
  readonly endpoints?: EndpointDeliveryDependencies;
  readonly retrySchedule?: readonly number[];
  readonly sendOptions?: SendOptions;
  readonly logger?: Logger;
  readonly now?: () => number;
  readonly maximumDelaySeconds?: number;
}

/** SQS delays a message at most 15 minutes. */
export const maximumDelaySeconds = 900;

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
      const fresh = cached !== undefined && now() - cached.readAt < secretCacheMilliseconds;
      if (fresh) return cached.value;
      const { SecretString } = await dependencies.secretsManager.send(
        new GetSecretValueCommand({ SecretId: subscriber.secretArn }),
      );
      if (SecretString === undefined) throw new Error(`The secret of ${subscriber.name} is empty.`);
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
  const deliveryFor = deliveryOf(dependencies, now);
  const sendForLater = laterSenderOf(dependencies, now);
  const deadLetter = deadLetterSenderOf(dependencies, now);

  return budgeted(
    backgroundMarginMilliseconds,
    async (event: SQSEvent, context?: InvocationContext): Promise<SQSBatchResponse> => {
      const logger = loggerOf(context);
      const deliver = deliveryFor(logger);
      // A record is one delivery or a bundle of one subscriber's; each is attempted side by side.
      const turns = event.Records.flatMap((record, index) => {
        const messages = parseDeliveryMessages(record.body, now());
        return messages.map((message) => ({ index, message, record, alone: messages.length < 2 }));
      });
      const recordOf = (turn: number) => (turns[turn] as (typeof turns)[number]).index;
      const outcomes = await Promise.allSettled(
        turns.map(async ({ message, record }) => {
          // Below its event's request, linked to the fan-out's send (none for a delete's).
          const trace =
            typeof message === 'string' ? undefined : parseTraceparent(message.traceparent);
          const span = {
            kind: 'consumer',
            service: 'deliver-webhook',
            context: trace && childOf(trace),
            links: [parseTraceparent(record.messageAttributes?.traceparent?.stringValue)],
          } as const;
          const step = await inSpan('deliver-webhook', span, () => deliver(message));
          if (step.kind === 'dead-letter') {
            await deadLetter(step.message, step.attempts, step.failure);
            return undefined;
          }
          return step.kind === 'later' ? step.message : undefined;
        }),
      );
      // One that failed unexpectedly goes back alone, due at once, its bundle's others not sent
      // again; a lone one's record comes back after the visibility timeout (SQS counts receipts).
      const failed = new Set<number>();
      const later = outcomes.map((outcome, turn) => {
        if (outcome.status === 'fulfilled') return outcome.value;
        logger.error('webhook delivery failed unexpectedly', { error: outcome.reason });
        const { message, alone } = turns[turn] as (typeof turns)[number];
        if (!alone && typeof message !== 'string') return message;
        failed.add(recordOf(turn));
        return undefined;
      });
      for (const turn of await sendForLater(later, logger)) failed.add(recordOf(turn));
      await flushSpans();
      return {
        batchItemFailures: [...failed]
          .sort((a, b) => a - b)
          .map((index) => ({ itemIdentifier: (event.Records[index] as SQSRecord).messageId })),
      };
    },
  );
}

/** An invocation's turns; what is no message goes to the dead letters as it is. */
function deliveryOf(dependencies: DeliverDependencies, now: () => number) {
  const stage = stageSubscriberTargets(secretsManagerSubscribers(dependencies, now));
  const endpoints = dependencies.endpoints && endpointTargets({ now, ...dependencies.endpoints });
  const { retrySchedule: schedule, sendOptions } = dependencies;
  return (logger: Logger) => {
    const targets = combinedTargets(stage, endpoints?.(logger));
    return (message: DeliveryMessage | string): Promise<DeliveryStep> => {
      if (typeof message !== 'string') {
        return attemptDelivery(message, targets, { logger, schedule, sendOptions, now });
      }
      const unreadable = firstDeliveryMessage({ webhookId: '', payload: message }, '', now());
      const failure = 'not a delivery message';
      return Promise.resolve({ kind: 'dead-letter', message: unreadable, attempts: 0, failure });
    };
  };
}

/** The later messages to the retry queue, delayed until due or 15 minutes; resolves the refused. */
function laterSenderOf(dependencies: DeliverDependencies, now: () => number) {
  const longestHop = dependencies.maximumDelaySeconds ?? maximumDelaySeconds;
  return async (later: readonly (DeliveryMessage | undefined)[], logger: Logger) => {
    const entries = later.flatMap((message, index) => {
      if (message === undefined) return [];
      const body = deliveryMessageBody(message);
      const dueIn = Math.max(Math.ceil((message.dueAt - now()) / 1000), 0);
      return [{ Id: String(index), MessageBody: body, DelaySeconds: Math.min(dueIn, longestHop) }];
    });
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
    const failedAt = new Date(now()).toISOString();
    const letter: DeadLetterMessage = { ...message, attempts, lastFailure, failedAt };
    const body = deliveryMessageBody(letter);
    await dependencies.sqs.send(
      new SendMessageCommand({ QueueUrl: dependencies.deadLetterQueueUrl, MessageBody: body }),
    );
  };
}
