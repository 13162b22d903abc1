/** The webhook pipeline's queue and mapping settings, for the stack and `npm start`. Plain data. */
import { functionSettings } from './function-settings.ts';

/** Receipts of one message before SQS dead-letters it: a safety net (Lambda advises 5 or more). */
export const deliveryMaxReceiveCount = 5;

/**
 * The retry queue mapping's concurrency: a dead subscriber's retries take no more of the account.
 * A hanging subscriber at ~1.2 new plants a second needs about 9 batches of 10 in progress.
 */
export const retryMaximumConcurrency = 20;

/**
 * The first attempts' mapping's concurrency: however slow the endpoints, deliveries never take
 * the account's concurrency (1,000 by default) from the route functions and the authorizer,
 * which keep 1,000 less this, less the retries', the fan-out's and the replay's (docs/capacity.md).
 * Past it, messages wait in the queue: late, not lost.
 */
export const deliveryMaximumConcurrency = 600;

/** Deliveries and Retries: six times the delivery's timeout (AWS's advice); 4 days kept. */
export const workQueueSettings = {
  visibilityTimeoutSeconds: 6 * functionSettings.deliverWebhook.timeoutSeconds,
  retentionSeconds: 4 * 24 * 3600,
} as const;

/** DeadLetters: kept as long as SQS allows, for someone to look and redrive. */
export const deadLetterQueueSettings = { retentionSeconds: 14 * 24 * 3600 } as const;

/** Both SQS mappings of the delivery function: ten messages to an invocation. */
export const deliveryBatchSize = 10;

/**
 * The fan-out's stream mapping: a failing batch is bisected, retried ten times, then kept. Ten
 * batches of a shard at once (Lambda keeps each plant's records in order across them: "Using AWS
 * Lambda with Amazon DynamoDB", parallelization factor), for 2,000 endpoints (docs/capacity.md).
 */
export const fanoutStreamSettings = {
  batchSize: 100,
  retryAttempts: 10,
  bisectBatchOnError: true,
  parallelizationFactor: 10,
} as const;
