/** Where deliveries wait for their attempt: SQS, or `npm start`'s stand-in, for every sender. */
import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { errorCodes } from '../errors/error-codes.ts';
import { ApiError } from '../errors/errors.ts';
import { forEachConcurrently } from '../platform/concurrency.ts';
import type { DeliveryMessage } from './delivery-message.ts';

export interface DeliveryQueue {
  /** Queues every message; rejects if any was not taken (none is then known to be lost). */
  send(messages: readonly DeliveryMessage[]): Promise<void>;
}

/** Batches in flight at once: 1,000 deliveries are 100 batches, ten at a time. */
const concurrentBatches = 10;

/** The delivery queue: ten messages to a SendMessageBatch (SQS's limit), ten batches at a time. */
export function sqsDeliveryQueue(sqs: Pick<SQSClient, 'send'>, queueUrl: string): DeliveryQueue {
  const sendBatch = async (batch: readonly DeliveryMessage[]) => {
    const { Failed = [] } = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: batch.map((message, index) => ({
          Id: String(index),
          MessageBody: JSON.stringify(message),
        })),
      }),
    );
    if (Failed.length === 0) return;
    const message = `SQS refused ${Failed.length} delivery messages (${Failed[0]?.Code})`;
    // An entry SQS failed on its side may be sent again (503); one it blames on us may not.
    if (Failed.some((entry) => entry.SenderFault)) throw new Error(message);
    throw new ApiError(errorCodes.storeUnavailable, message);
  };
  return {
    send: async (messages) => {
      const batches: DeliveryMessage[][] = [];
      for (let start = 0; start < messages.length; start += 10) {
        batches.push(messages.slice(start, start + 10));
      }
      const failures: unknown[] = [];
      await forEachConcurrently(batches, concurrentBatches, (batch) =>
        sendBatch(batch).catch((error: unknown) => {
          failures.push(error);
        }),
      );
      if (failures.length > 0) throw failures[0];
    },
  };
}
