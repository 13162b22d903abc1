/**
 * One attempt of one queued delivery, and what follows it: the step the delivery function runs,
 * deployed and under `npm start`. Where the message goes is asked of its targets as it is sent (`DeliveryTargets`): a stage subscriber by name, a webhook endpoint as its owner left it
 * a moment ago (deleted, disabled or pointed elsewhere counts at once).
 */
import { StoreUnavailableError } from '../errors/errors.ts';
import type { Logger } from '../platform/logger.ts';
import type { DeliveryMessage } from './delivery-message.ts';
import {
  defaultRetrySchedule,
  type NextStep,
  nextStepAfter,
  retryDelaySeconds,
  type SendOptions,
  type SendOutcome,
  sendWebhook,
  webhookLog,
} from './send-webhook.ts';

/** Where one message goes, and what is kept of its attempt. */
export interface DeliveryTarget {
  /** Makes one attempt: checks what must be checked, signs, sends. */
  attempt(message: DeliveryMessage, options: SendOptions): Promise<SendOutcome>;
  /**
   * Keeps what the attempt came to and what follows it (an endpoint's attempts, health and
   * delivery claim); errors are logged.
   */
  record?(
    message: DeliveryMessage,
    outcome: SendOutcome,
    timing: AttemptTiming,
    next: NextStep['kind'],
  ): Promise<void>;
}

export interface AttemptTiming {
  readonly startedAt: number;
  readonly durationMilliseconds: number;
}

/**
 * The target of a message now: one to attempt, none any more (`done`, with why: the endpoint was
 * deleted, disabled, or already had the event), not yet (`retryAt`: another delivery holds the
 * event for a short while), or none ever (`unknown`: a dead letter).
 */
export type TargetResolution =
  | { readonly target: DeliveryTarget }
  | { readonly done: string }
  | { readonly retryAt: number }
  | { readonly unknown: true };

export interface DeliveryTargets {
  resolve(message: DeliveryMessage): Promise<TargetResolution>;
}

/** What follows a message's turn. */
export type DeliveryStep =
  | { readonly kind: 'done' }
  /** Wait, then try this message (the next attempt, or the same one not yet due). */
  | { readonly kind: 'later'; readonly message: DeliveryMessage }
  | {
      readonly kind: 'dead-letter';
      readonly message: DeliveryMessage;
      readonly attempts: number;
      readonly failure: string;
    };

export interface AttemptOptions {
  readonly logger: Logger;
  readonly schedule?: readonly number[];
  readonly sendOptions?: SendOptions;
  readonly now?: () => number;
}

/** The log line of an attempt put off because the store did not answer. */
export const putOffLog = 'webhook attempt put off: the store did not answer';

/** The log line of a message that has nowhere to go any more. */
export const notSentLog = 'webhook not sent';

/** Takes a message's turn: not yet due, nowhere to go, or one attempt and what follows it. */
export async function attemptDelivery(
  message: DeliveryMessage,
  targets: DeliveryTargets,
  options: AttemptOptions,
): Promise<DeliveryStep> {
  const now = options.now ?? Date.now;
  const { logger } = options;
  // Received before its attempt is due: one more hop (SQS delays 15 minutes at most), so that
  // no attempt is made before the schedule says.
  if (message.dueAt > now()) return { kind: 'later', message };
  let resolution: TargetResolution;
  try {
    resolution = await targets.resolve(message);
  } catch (error) {
    // The store the target is read from did not answer: no attempt was made, so none is spent
    // and none is dead-lettered; the same attempt waits as long as this one's retry would (or
    // the last wait) rather than the queue's visibility timeout (minutes).
    if (!(error instanceof StoreUnavailableError)) throw error;
    const schedule = options.schedule ?? defaultRetrySchedule;
    const delaySeconds = retryDelaySeconds(message.attempt, schedule) ?? schedule.at(-1) ?? 60;
    logger.warn(putOffLog, {
      webhookId: message.webhookId,
      attempt: message.attempt,
      delaySeconds,
    });
    return { kind: 'later', message: { ...message, dueAt: now() + delaySeconds * 1000 } };
  }
  if ('retryAt' in resolution)
    return { kind: 'later', message: { ...message, dueAt: resolution.retryAt } };
  if ('unknown' in resolution) {
    // Nothing could ever deliver it (a subscriber removed from the stage): keep it, visibly.
    return { kind: 'dead-letter', message, attempts: 0, failure: 'no such subscriber' };
  }
  if ('done' in resolution) {
    logger.info(notSentLog, {
      webhookId: message.webhookId,
      subscriber: message.subscriber,
      [webhookLog.outcomeField]: 'not-sent',
      reason: resolution.done,
    });
    return { kind: 'done' };
  }
  const startedAt = now();
  const outcome = await resolution.target.attempt(message, {
    ...options.sendOptions,
    now: new Date(startedAt),
  });
  const timing = { startedAt, durationMilliseconds: now() - startedAt };
  const step = nextStepAfter(
    outcome,
    message,
    logger,
    options.schedule ?? defaultRetrySchedule,
    now(),
  );
  try {
    await resolution.target.record?.(message, outcome, timing, step.kind);
  } catch (error) {
    // The attempt stands; only its record is missing.
    logger.error('could not record a webhook attempt', { webhookId: message.webhookId, error });
  }
  return stepAfter(step, message, now);
}

/** The delivery step that follows an attempt's next step. */
function stepAfter(step: NextStep, message: DeliveryMessage, now: () => number): DeliveryStep {
  if (step.kind === 'delivered') return { kind: 'done' };
  if (step.kind === 'dead-letter') {
    return { kind: 'dead-letter', message, attempts: message.attempt, failure: step.failure };
  }
  return {
    kind: 'later',
    message: { ...message, attempt: message.attempt + 1, dueAt: now() + step.delaySeconds * 1000 },
  };
}

/** A stage configuration's subscriber: its URL, and its secret as its store gives it. */
export interface StageSubscriber {
  readonly name: string;
  readonly url: string;
  secret(): Promise<string>;
}

/** The stage configuration's subscribers, by name; a name none has is `unknown`. */
export function stageSubscriberTargets(subscribers: readonly StageSubscriber[]): DeliveryTargets {
  return {
    resolve: async (message) => {
      const subscriber = subscribers.find((candidate) => candidate.name === message.subscriber);
      if (subscriber === undefined || message.endpoint !== undefined) return { unknown: true };
      return {
        target: {
          attempt: async (queued, options) =>
            sendWebhook(
              queued,
              { name: subscriber.name, url: subscriber.url, secret: await subscriber.secret() },
              options,
            ),
        },
      };
    },
  };
}

/** Stage subscribers' messages to `stage`, endpoints' to `endpoints`. */
export function combinedTargets(
  stage: DeliveryTargets,
  endpoints: DeliveryTargets | undefined,
): DeliveryTargets {
  return {
    resolve: (message) =>
      message.endpoint === undefined || endpoints === undefined
        ? stage.resolve(message)
        : endpoints.resolve(message),
  };
}
