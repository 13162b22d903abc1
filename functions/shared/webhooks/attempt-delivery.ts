/**
 * One attempt of one queued delivery and what follows it, deployed and under `npm start`. The
 * target is resolved as the message is sent: an endpoint as its owner left it a moment ago.
 */
import { StoreUnavailableError } from '../errors/errors.ts';
import type { Logger } from '../platform/logger.ts';
import { activeSpan } from '../platform/spans.ts';
import type { DeliveryMessage } from './delivery-message.ts';
import {
  defaultRetrySchedule,
  type NextStep,
  nextStepAfter,
  type SendOptions,
  type SendOutcome,
  sendWebhook,
  webhookLog,
} from './send-webhook.ts';

/** Where one message goes, and what is kept of its attempt. */
export interface DeliveryTarget {
  /** Makes one attempt: checks what must be checked, signs, sends. */
  attempt(message: DeliveryMessage, options: SendOptions): Promise<SendOutcome>;
  /** Keeps the attempt and what follows it (an endpoint's attempts, health, claim). */
  record?(
    message: DeliveryMessage,
    outcome: SendOutcome,
    timing: { readonly startedAt: number; readonly durationMilliseconds: number },
    next: NextStep['kind'],
  ): Promise<void>;
}

/**
 * A message's target now: one to attempt, none any more (`done`, why), not yet (`retryAt`: another
 * delivery holds the event), not among first attempts (`sideline`: its endpoint is failing, so
 * the attempt is made from the retry queue, unspent), or none ever (`unknown`: a dead letter).
 */
export type TargetResolution =
  | { readonly target: DeliveryTarget }
  | { readonly done: string }
  | { readonly retryAt: number }
  | { readonly sideline: true }
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

/** A put-off attempt's first wait, doubling with each put-off in a row. */
export const firstPutOffSeconds = 5;
export const sidelinedLog = 'webhook first attempt sidelined: its endpoint is failing';

/** Takes a message's turn: not yet due, nowhere to go, or one attempt and what follows it. */
export async function attemptDelivery(
  message: DeliveryMessage,
  targets: DeliveryTargets,
  options: AttemptOptions,
): Promise<DeliveryStep> {
  const now = options.now ?? Date.now;
  const schedule = options.schedule ?? defaultRetrySchedule;
  // The attempt's lines are in its event's trace, as its delivery's span is.
  const traceId = activeSpan()?.traceId;
  const logger = traceId === undefined ? options.logger : options.logger.child({ traceId });
  // Not yet due: one more hop (SQS delays 15 minutes at most).
  if (message.dueAt > now()) return { kind: 'later', message };
  let resolution: TargetResolution;
  try {
    resolution = await targets.resolve(message);
  } catch (error) {
    // The target's store did not answer: no attempt is spent, and the same one is tried again in
    // seconds (5, 10, 20 … a store blip passes), never later than its own retry would come.
    if (!(error instanceof StoreUnavailableError)) throw error;
    const putOffs = (message.putOffs ?? 0) + 1;
    const longest = schedule[message.attempt - 1] ?? schedule.at(-1) ?? 60;
    const delaySeconds = Math.min(firstPutOffSeconds * 2 ** (putOffs - 1), longest);
    logger.warn('webhook attempt put off: the store did not answer', {
      webhookId: message.webhookId,
      attempt: message.attempt,
      putOffs,
      delaySeconds,
    });
    return { kind: 'later', message: { ...message, putOffs, dueAt: now() + delaySeconds * 1000 } };
  }
  if ('retryAt' in resolution)
    return { kind: 'later', message: { ...message, dueAt: resolution.retryAt } };
  if ('sideline' in resolution) {
    logger.info(sidelinedLog, { webhookId: message.webhookId, subscriber: message.subscriber });
    return { kind: 'later', message: { ...message, sidelined: true, dueAt: now() } };
  }
  if ('unknown' in resolution) {
    return { kind: 'dead-letter', message, attempts: 0, failure: 'no such subscriber' };
  }
  if ('done' in resolution) {
    logger.info('webhook not sent', {
      webhookId: message.webhookId,
      subscriber: message.subscriber,
      [webhookLog.outcomeField]: 'not-sent',
      reason: resolution.done,
    });
    return { kind: 'done' };
  }
  const startedAt = now();
  const sendOptions = { ...options.sendOptions, now: new Date(startedAt) };
  const outcome = await resolution.target.attempt(message, sendOptions);
  const timing = { startedAt, durationMilliseconds: now() - startedAt };
  const step = nextStepAfter(outcome, message, logger, schedule, now());
  try {
    await resolution.target.record?.(message, outcome, timing, step.kind);
  } catch (error) {
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
  const next = { ...message, attempt: message.attempt + 1, putOffs: undefined };
  return { kind: 'later', message: { ...next, dueAt: now() + step.delaySeconds * 1000 } };
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
      const { name, url } = subscriber;
      const attempt: DeliveryTarget['attempt'] = async (queued, options) =>
        sendWebhook(queued, { name, url, secret: await subscriber.secret() }, options);
      return { target: { attempt } };
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
