/** Where deliveries wait for their attempt: SQS, or `npm start`'s stand-in, for every sender. */
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { errorCodes } from '../errors/error-codes.ts';
import { ApiError } from '../errors/errors.ts';
import { forEachConcurrently } from '../platform/concurrency.ts';
import { remainingBudget } from '../platform/invocation-budget.ts';
import { type AwsCallArgs, type Span, traceAwsCalls } from '../platform/spans.ts';
import { formatTraceparent } from '../platform/trace-context.ts';
import {
  bundleLimits,
  type DeliveryMessage,
  deliveryMessageBody,
  deliveryMessagesBody,
} from './delivery-message.ts';

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
 * The SQS client of every sender: with `AWS_ENDPOINT_URL` (an emulator), that endpoint, whatever
 * host a queue URL names; elsewhere the queue URL's host, in AWS the regional endpoint.
 */
export function createSqsClient(): SQSClient {
  const sqs = new SQSClient(process.env.AWS_ENDPOINT_URL ? { useQueueUrlAsEndpoint: false } : {});
  traceAwsCalls(sqs, 'SQS', withTraceparent);
  return sqs;
}

/** A send's messages carry its span, in a copy, where they have room (10 attributes). */
function withTraceparent(args: AwsCallArgs, operation: string, span: Span): AwsCallArgs {
  if (!/^SendMessage(Batch)?$/.test(operation)) return args;
  const traceparent = { DataType: 'String', StringValue: formatTraceparent(span) };
  const traced = (entry: { MessageAttributes?: object }) =>
    Object.keys(entry.MessageAttributes ?? {}).length < 10
      ? { ...entry, MessageAttributes: { ...entry.MessageAttributes, traceparent } }
      : entry;
  const { Entries } = args.input as { Entries?: object[] };
  return {
    ...args,
    input: Entries ? { ...args.input, Entries: Entries.map(traced) } : traced(args.input),
  };
}

/** Batches in flight at once (the SDK's 50 sockets a client): 200 batches in about 80 ms. */
export const concurrentSendBatches = 50;

/** `messages` as queue messages: each subscriber's, in order, bundled within `bundleLimits`. */
export function bundlesOf(
  messages: readonly DeliveryMessage[],
  bodyOf: (message: DeliveryMessage) => string = deliveryMessageBody,
): DeliveryMessage[][] {
  const open = new Map<string, { bundle: DeliveryMessage[]; bytes: number }>();
  const bundles: DeliveryMessage[][] = [];
  for (const message of messages) {
    const bytes = Buffer.byteLength(bodyOf(message)) + 1;
    let current = open.get(message.subscriber);
    if (
      current === undefined ||
      current.bundle.length === bundleLimits.messages ||
      current.bytes + bytes > bundleLimits.bodyBytes
    ) {
      current = { bundle: [], bytes: 16 };
      open.set(message.subscriber, current);
      bundles.push(current.bundle);
    }
    current.bundle.push(message);
    current.bytes += bytes;
  }
  return bundles;
}

/**
 * Of the stage's delivery queues, the one that takes a subscriber's messages, by FNV-1a (cheap: a
 * fan-out batch at L hashes 200,000 bundles): always the same, so they share one mapping.
 */
export function queueOf(queueUrls: readonly string[], subscriber: string): string {
  if (queueUrls.length === 1) return queueUrls[0] as string;
  let hash = 2166136261;
  for (const char of subscriber) hash = Math.imul(hash ^ (char.codePointAt(0) ?? 0), 16777619);
  return queueUrls[(hash >>> 0) % queueUrls.length] as string;
}

/**
 * The delivery queues (`DELIVERY_QUEUE_URLS`): each subscriber's messages bundled (`bundlesOf`),
 * on its queue (`queueOf`), ten bundles to a SendMessageBatch (SQS's limit), 50 at a time.
 */
export function sqsDeliveryQueue(sqs: Pick<SQSClient, 'send'>, queueUrls: string): DeliveryQueue {
  const urls = queueUrls.trim().split(/\s+/);
  const sendBatch = async (
    { queueUrl, batch }: { queueUrl: string; batch: readonly DeliveryMessage[][] },
    bodyOf: (message: DeliveryMessage) => string,
  ) => {
    // Within the invocation's time, as a store call is (`invocation-budget.ts`).
    const budget = remainingBudget();
    if (budget <= 0) throw new Error('No time left in the invocation.');
    const { Failed = [] } = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: batch.map((bundle, index) => ({
          Id: String(index),
          MessageBody: deliveryMessagesBody(bundle, bodyOf),
        })),
      }),
      Number.isFinite(budget) ? { abortSignal: AbortSignal.timeout(budget) } : {},
    );
    return Failed;
  };
  return {
    send: async (messages) => {
      // Each body written once: to size the bundles, then to send them.
      const bodies = new Map(messages.map((message) => [message, deliveryMessageBody(message)]));
      const bodyOf = (message: DeliveryMessage) => bodies.get(message) as string;
      const bundles = bundlesOf(messages, bodyOf);
      const byQueue = Map.groupBy(bundles, ([first]) => queueOf(urls, first?.subscriber ?? ''));
      const batches = [...byQueue].flatMap(([queueUrl, queued]) =>
        Array.from({ length: Math.ceil(queued.length / 10) }, (_, index) => {
          return { queueUrl, batch: queued.slice(10 * index, 10 * index + 10) };
        }),
      );
      const unsent: DeliveryMessage[] = [];
      // Refused for good only when SQS blamed the sender for every message it did not take: an
      // entry it failed on its side, or a request that failed whole, may be sent again.
      let mayBeSentAgain = 0;
      let code: string | undefined;
      await forEachConcurrently(batches, concurrentSendBatches, async ({ queueUrl, batch }) => {
        try {
          for (const entry of await sendBatch({ queueUrl, batch }, bodyOf)) {
            const bundle = batch[Number(entry.Id)] as DeliveryMessage[];
            unsent.push(...bundle);
            if (entry.SenderFault !== true) mayBeSentAgain += bundle.length;
            code ??= entry.Code;
          }
        } catch (error) {
          const all = batch.flat();
          unsent.push(...all);
          mayBeSentAgain += all.length;
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
