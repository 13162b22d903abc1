/** The webhook pipeline's queue and mapping settings, for the stack and `npm start`. Plain data. */
import { functionSettings } from './function-settings.ts';
import type { WebhookDeliveriesConfig } from './stages.ts';

/** Receipts of one message before SQS dead-letters it: a safety net (Lambda advises 5 or more). */
export const deliveryMaxReceiveCount = 5;

/**
 * The retry queue mapping's concurrency: a dead subscriber's retries take no more of the account.
 * A hanging subscriber at ~1.2 new plants a second needs about 9 batches of 10 in progress.
 */
export const retryMaximumConcurrency = 20;

/** Most functions one SQS mapping takes at once ("ScalingConfig": MaximumConcurrency 2 to 1,000). */
export const mappingMaximumConcurrency = 1_000;

/** A first-attempt queue's mapping maximum: past it, messages wait in the queue, late, not lost. */
export function deliveryMappingConcurrency({ concurrency, queues }: WebhookDeliveriesConfig) {
  const each = concurrency / queues;
  const even = Number.isInteger(queues) && Number.isInteger(each);
  if (even && each >= 2 && each <= mappingMaximumConcurrency) return each;
  throw new Error(
    `webhookDeliveries: ${concurrency} functions on ${queues} queues; each queue's mapping takes an even, whole share of 2 to ${mappingMaximumConcurrency} (add queues).`,
  );
}

/** Deliveries and Retries: six times the delivery's timeout (AWS's advice); 4 days kept. */
export const workQueueSettings = {
  visibilityTimeoutSeconds: 6 * functionSettings.deliverWebhook.timeoutSeconds,
  retentionSeconds: 4 * 24 * 3600,
} as const;

/** DeadLetters: kept as long as SQS allows, for someone to look and redrive. */
export const deadLetterQueueSettings = { retentionSeconds: 14 * 24 * 3600 } as const;

/** Every SQS mapping of the delivery function: ten messages to an invocation. */
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
