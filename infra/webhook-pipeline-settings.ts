/**
 * The webhook pipeline's queue and mapping settings, as plain data (no aws-cdk-lib): the stack
 * builds its queues and event source mappings from them, and the local pipeline (`npm start`
 * and the test beds) imitates the same.
 */
import { functionSettings } from './function-settings.ts';

/**
 * How often SQS may hand out the same delivery message before it goes to DeadLetters. Each
 * message is one attempt and is normally received once; this catches one whose handling keeps
 * failing (an AWS call failing, a crash). Lambda advises at least 5 for SQS event sources.
 */
export const deliveryMaxReceiveCount = 5;

/**
 * The most delivery functions the retry queue's mapping runs at once (Lambda's SQS
 * `maximumConcurrency`). A dead subscriber's retries and hops, however many, then take at most
 * this much of the account's concurrency, leaving the rest to first attempts on the delivery
 * queue. Sized for the worst case: a subscriber that hangs (10 s a try) at ~1.2 new plants a
 * second needs ~8.4 attempts a second, ~84 in progress, about 9 batches of 10; 20 leaves room,
 * and the Retries queue's age alarm says when it does not.
 */
export const retryMaximumConcurrency = 20;

/**
 * Deliveries and Retries: six times the delivery function's timeout, as AWS advises for SQS event
 * sources; a message may wait 4 days (a hop is 15 minutes at most, so days are plenty).
 */
export const workQueueSettings = {
  visibilityTimeoutSeconds: 6 * functionSettings.deliverWebhook.timeoutSeconds,
  retentionSeconds: 4 * 24 * 3600,
} as const;

/** DeadLetters: kept as long as SQS allows, for someone to look and redrive. */
export const deadLetterQueueSettings = { retentionSeconds: 14 * 24 * 3600 } as const;

/** Both SQS mappings of the delivery function: ten messages to an invocation. */
export const deliveryBatchSize = 10;

/**
 * The fan-out's stream mapping: every record of the plants stream from the start, a hundred to an
 * invocation, a failing batch bisected and retried ten times, then kept (StreamFailures bucket).
 */
export const fanoutStreamSettings = {
  batchSize: 100,
  retryAttempts: 10,
  bisectBatchOnError: true,
} as const;
