/** Where deliveries wait for their attempt: SQS, or `npm start`'s stand-in, for every sender. */
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { errorCodes } from '../errors/error-codes.ts';
import { ApiError } from '../errors/errors.ts';
import { forEachConcurrently } from '../platform/concurrency.ts';
import { remainingBudget } from '../platform/invocation-budget.ts';
import { type DeliveryMessage, deliveryMessageBody } from './delivery-message.ts';

/**
 * Some messages were not queued (the rest were): `unsent` names them. A `refused` one SQS blamed on
 * the sender, so sending it again cannot help; the others may be sent again (503).
 */
export class MessagesNotQueuedError extends ApiError {
  override readonly name = 'MessagesNotQueuedError';
  readonly unsent: readonly DeliveryMessage[];
  readonly refused: boolean;

  constructor(message: string, unsent: readonly DeliveryMessage[], refused: boolean) {
    // Refused for good: a retry cannot help, so not a 503's "safe to retry".
    super(refused ? errorCodes.internal : errorCodes.storeUnavailable, message);
    this.unsent = unsent;
    this.refused = refused;
  }
}

/** The messages of `messages` that a failed `send` did not queue: all, unless it says which. */
export function unsentOf(
  error: unknown,
  messages: readonly DeliveryMessage[],
): readonly DeliveryMessage[] {
  return error instanceof MessagesNotQueuedError ? error.unsent : messages;
}

export interface DeliveryQueue {
  /** Queues every message; rejects with {@link MessagesNotQueuedError} if any was not taken. */
  send(messages: readonly DeliveryMessage[]): Promise<void>;
}

/**
 * The SQS client of every sender. With `AWS_ENDPOINT_URL` (an emulator) it calls that endpoint,
 * whatever host a queue URL names (an emulator's name themselves); elsewhere the queue URL's host,
 * which in AWS is the regional endpoint.
 */
export function createSqsClient(): SQSClient {
  return new SQSClient(process.env.AWS_ENDPOINT_URL ? { useQueueUrlAsEndpoint: false } : {});
}

/**
 * Batches in flight at once: 2,000 deliveries are 200 batches, 50 at a time (the SDK's 50 sockets
 * a client), so an event to 2,000 endpoints is queued in about 80 ms.
 */
export const concurrentSendBatches = 50;

/** The delivery queue: ten messages to a SendMessageBatch (SQS's limit), 50 batches at a time. */
export function sqsDeliveryQueue(sqs: Pick<SQSClient, 'send'>, queueUrl: string): DeliveryQueue {
  const sendBatch = async (batch: readonly DeliveryMessage[]) => {
    // Within the invocation's time, as a store call is (`invocation-budget.ts`).
    const budget = remainingBudget();
    if (budget <= 0) throw new Error('No time left in the invocation.');
    const { Failed = [] } = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: batch.map((message, index) => ({
          Id: String(index),
          MessageBody: deliveryMessageBody(message),
        })),
      }),
      Number.isFinite(budget) ? { abortSignal: AbortSignal.timeout(budget) } : {},
    );
    return Failed;
  };
  return {
    send: async (messages) => {
      const batches: DeliveryMessage[][] = [];
      for (let start = 0; start < messages.length; start += 10) {
        batches.push(messages.slice(start, start + 10));
      }
      const unsent: DeliveryMessage[] = [];
      // Refused for good only when SQS blamed the sender for every message it did not take: an
      // entry it failed on its side, or a request that failed whole, may be sent again.
      let mayBeSentAgain = 0;
      let code: string | undefined;
      await forEachConcurrently(batches, concurrentSendBatches, async (batch) => {
        try {
          for (const entry of await sendBatch(batch)) {
            unsent.push(batch[Number(entry.Id)] as DeliveryMessage);
            if (entry.SenderFault !== true) mayBeSentAgain += 1;
            code ??= entry.Code;
          }
        } catch (error) {
          unsent.push(...batch);
          mayBeSentAgain += batch.length;
          code ??= (error as Error).name;
        }
      });
      if (unsent.length > 0) {
        throw new MessagesNotQueuedError(
          `SQS did not take ${unsent.length} of ${messages.length} delivery messages (${code})`,
          unsent,
          mayBeSentAgain === 0,
        );
      }
    },
  };
}
