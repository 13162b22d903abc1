/**
 * SQS's rules for the in-process queues (`memory-queues.ts`): its limits, its errors, and how
 * a receive waits for a message.
 */
/** SQS's largest batch, and its largest message (and batch) in bytes. */
export const largestBatch = 10;
export const largestPayloadBytes = 1024 * 1024;
export const fourDaysSeconds = 4 * 24 * 3600;

export interface MemoryQueueSettings {
  readonly visibilityTimeoutSeconds: number;
  /** How long a message is kept. @default 4 days, as SQS */
  readonly retentionSeconds?: number;
  /** The redrive policy: where a message goes after `maxReceiveCount` receives. */
  readonly deadLetter?: { readonly queueArn: string; readonly maxReceiveCount: number };
}

/** A message's attributes, as SQS keeps and answers them (`String` and `Number` ones). */
export type StoredAttributes = Readonly<
  Record<string, { readonly DataType: string; readonly StringValue?: string }>
>;

export interface StoredMessage {
  readonly id: string;
  readonly body: string;
  readonly attributes?: StoredAttributes;
  readonly md5: string;
  readonly sentAt: number;
  visibleAt: number;
  receiveCount: number;
  firstReceivedAt?: number;
  receiptHandle?: string;
}

export interface StoredQueue {
  readonly name: string;
  readonly arn: string;
  readonly settings: MemoryQueueSettings;
  messages: StoredMessage[];
  /** Receives waiting for a message: woken by a send, a visibility change or `close`. */
  readonly waiting: Set<() => void>;
}

/** An error as the SDK raises SQS's, found by its `name`. */
export function sqsError(name: string, message: string): Error {
  return Object.assign(new Error(message), { name, $fault: 'client' });
}

/** SQS's allowed characters: #x9, #xA, #xD, #x20 to #xD7FF, #xE000 to #xFFFD, #x10000 up. */
export const allowedBody = /^[\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]*$/u;

/** Wakes every receive waiting on the queue. */
export function wake(queue: StoredQueue): void {
  for (const resolve of queue.waiting) resolve();
}

/** Resolves when the queue is woken, after `milliseconds`, or when `signal` aborts. */
export function waitForMessage(
  queue: StoredQueue,
  milliseconds: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      queue.waiting.delete(done);
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, milliseconds));
    queue.waiting.add(done);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** The message as a new arrival on another queue: same id, body and first-sent time. */
export function resting(message: StoredMessage, at: number): StoredMessage {
  return {
    id: message.id,
    body: message.body,
    ...(message.attributes === undefined ? {} : { attributes: message.attributes }),
    md5: message.md5,
    sentAt: message.sentAt,
    visibleAt: at,
    receiveCount: 0,
  };
}

/**
 * A message over 1 MiB is an invalid parameter; a batch over it, a batch too long. Attributes
 * count, each its name, type and value ("Amazon SQS message attributes").
 */
export function checkPayload(
  messages: readonly { body: string; attributes?: StoredAttributes }[],
  batch: boolean,
): void {
  const bytes = messages.reduce(
    (total, { body, attributes = {} }) =>
      total +
      Buffer.byteLength(body) +
      Object.entries(attributes).reduce(
        (sum, [name, value]) =>
          sum +
          Buffer.byteLength(name + value.DataType) +
          Buffer.byteLength(value.StringValue ?? ''),
        0,
      ),
    0,
  );
  if (bytes <= largestPayloadBytes) return;
  throw batch
    ? sqsError('BatchRequestTooLong', 'The messages hold more than 1 MiB together.')
    : sqsError('InvalidParameterValue', 'The message is longer than 1 MiB.');
}

export function checkBatch(ids: readonly (string | undefined)[]): void {
  if (ids.length === 0) throw sqsError('EmptyBatchRequest', 'The batch has no entries.');
  if (ids.length > largestBatch) {
    throw sqsError('TooManyEntriesInBatchRequest', 'A batch has at most 10 entries.');
  }
  if (new Set(ids).size !== ids.length) {
    throw sqsError('BatchEntryIdsNotDistinct', 'Two entries of the batch have the same id.');
  }
}

/** Deletes the message `receiptHandle` names; an out-of-date handle deletes nothing, and succeeds. */
export function deleteMessage(queue: StoredQueue, receiptHandle: string | undefined): void {
  if (receiptHandle === undefined || receiptHandle === '') {
    throw sqsError('ReceiptHandleIsInvalid', "The specified receipt handle isn't valid.");
  }
  queue.messages = queue.messages.filter((message) => message.receiptHandle !== receiptHandle);
}
