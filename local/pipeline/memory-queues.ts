/**
 * SQS in this process, for `npm start`, with SQS's rules for the calls the webhook functions and
 * Lambda's mapping make (Amazon SQS Developer Guide): `DelaySeconds` up to 900, a visibility
 * timeout and receive counts (a stale receipt handle deletes nothing), the dead-letter queue at
 * `maxReceiveCount`, long polls, batches of 1 to 10 under 1 MiB, retention, and
 * `StartMessageMoveTask`, and `String` message attributes. Not imitated: FIFO, binary attributes,
 * SQS's duplicates. Given a file,
 * the queues are saved on close and journalled meanwhile, so a crash loses no message
 * (`saved-queues.ts`).
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import {
  QueueJournal,
  readSavedQueues,
  removeSavedQueues,
  type SavedMessage,
  writeSavedQueues,
} from './saved-queues.ts';
import {
  allowedBody,
  checkBatch,
  checkPayload,
  deleteMessage,
  fourDaysSeconds,
  largestBatch,
  type MemoryQueueSettings,
  resting,
  type StoredAttributes,
  type StoredMessage,
  type StoredQueue,
  sqsError,
  waitForMessage,
  wake,
} from './sqs-rules.ts';

export type { MemoryQueueSettings } from './sqs-rules.ts';

export interface MemoryQueue {
  readonly url: string;
  readonly arn: string;
}

export interface MemoryQueues {
  /** Answers the calls named above as SQS does; any other fails. */
  readonly sqs: Pick<SQSClient, 'send'>;
  create(name: string, settings: MemoryQueueSettings): MemoryQueue;
  /** The bodies a queue holds, oldest first, in flight or not. */
  bodies(url: string): readonly string[];
  /**
   * Ends every receive waiting for a message (answering none) and every timer, and saves the
   * messages to the file, if there is one.
   */
  close(): void;
}

/** The size past which the journal is written anew with only the messages held. */
const journalRewriteBytes = 16 * 1024 * 1024;

/** A message as it is saved: a receive's handle aside (a new start hands out new ones). */
function savedOf({ md5: _md5, receiptHandle: _handle, ...message }: StoredMessage): SavedMessage {
  return message;
}

/** Queues in this process, answering SQS's calls; `close` saves them to `file`, if given. */
export function memoryQueues(
  options: { region?: string; now?: () => number; file?: string } = {},
): MemoryQueues {
  const journal =
    options.file === undefined ? undefined : new QueueJournal(`${options.file}.journal`);
  // Saved at a clean stop; else what the journal kept before a crash.
  const kept = readSavedQueues(options.file);
  const saved = Object.keys(kept).length > 0 ? kept : (journal?.read() ?? {});
  journal?.rewrite(saved); // before the saved file goes: a crash in between loses none
  removeSavedQueues(options.file);
  const queues = new QueueSet(options.region ?? 'us-east-1', options.now ?? Date.now, journal);
  return {
    sqs: {
      send: (async (command: unknown, sendOptions?: { abortSignal?: AbortSignal }) => ({
        ...(await queues.answer(command, sendOptions?.abortSignal)),
        $metadata: { httpStatusCode: 200, attempts: 1 },
      })) as unknown as SQSClient['send'],
    },
    create: (name, settings) => queues.create(name, settings, saved[name] ?? []),
    bodies: (url) => queues.queueOf(url).messages.map((message) => message.body),
    close: () => queues.close(options.file),
  };
}

/** The queues, their messages and timers, and SQS's calls on them. */
class QueueSet {
  readonly #queues = new Map<string, StoredQueue>();
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #account = '000000000000';
  #closed = false;

  readonly region: string;
  readonly now: () => number;

  readonly #journal: QueueJournal | undefined;

  constructor(region: string, now: () => number, journal?: QueueJournal) {
    this.region = region;
    this.now = now;
    this.#journal = journal;
  }

  /** Answers one SQS call, as the SDK's `send` would. */
  async answer(command: unknown, signal: AbortSignal | undefined): Promise<object> {
    if (this.#closed) throw sqsError('ServiceUnavailable', 'The queues are closed.');
    if (command instanceof SendMessageCommand) {
      const { QueueUrl, MessageBody = '', DelaySeconds } = command.input;
      const queue = this.queueOf(QueueUrl);
      const attributes = attributesOf(command.input.MessageAttributes);
      checkPayload([{ body: MessageBody, attributes }], false);
      const message = this.#enqueue(queue, MessageBody, DelaySeconds, attributes);
      return { MessageId: message.id, MD5OfMessageBody: message.md5 };
    }
    if (command instanceof SendMessageBatchCommand) return this.#sendBatch(command);
    if (command instanceof ReceiveMessageCommand) return this.#receive(command, signal);
    if (command instanceof DeleteMessageCommand) {
      this.#delete(this.queueOf(command.input.QueueUrl), command.input.ReceiptHandle);
      return {};
    }
    if (command instanceof DeleteMessageBatchCommand) {
      const { QueueUrl, Entries = [] } = command.input;
      const queue = this.queueOf(QueueUrl);
      checkBatch(Entries.map((entry) => entry.Id));
      for (const entry of Entries) this.#delete(queue, entry.ReceiptHandle);
      return { Successful: Entries.map((entry) => ({ Id: entry.Id })), Failed: [] };
    }
    if (command instanceof GetQueueAttributesCommand) return this.#attributes(command);
    if (command instanceof StartMessageMoveTaskCommand) {
      const source = this.#queueByArn(command.input.SourceArn);
      const destination = this.#queueByArn(command.input.DestinationArn);
      const at = this.now();
      const moved = source.messages.splice(0).map((message) => resting(message, at));
      // Journaled where it arrives first: a crash between the two lines doubles it, never loses it.
      destination.messages.push(...moved);
      this.#keep(destination, moved);
      this.#forget(source, moved);
      wake(destination);
      return { TaskHandle: randomUUID() };
    }
    throw sqsError(
      'UnsupportedOperation',
      `${(command as object).constructor.name} is not served here.`,
    );
  }

  /** Makes a queue, holding the messages saved for it at the last close. */
  create(name: string, settings: MemoryQueueSettings, saved: readonly SavedMessage[]): MemoryQueue {
    const url = `http://sqs.${this.region}.localhost/${this.#account}/${name}`;
    const arn = `arn:aws:sqs:${this.region}:${this.#account}:${name}`;
    if (settings.deadLetter !== undefined) this.#queueByArn(settings.deadLetter.queueArn);
    const messages = saved.map((message) => ({
      ...message,
      md5: createHash('md5').update(message.body).digest('hex'),
    }));
    const queue = { name, arn, settings, messages, waiting: new Set<() => void>() };
    this.#queues.set(url, queue);
    for (const message of messages) this.#wakeAt(queue, message.visibleAt);
    return { url, arn };
  }

  queueOf(url: string | undefined): StoredQueue {
    const queue = this.#queues.get(url ?? '');
    if (queue === undefined) {
      throw sqsError('QueueDoesNotExist', 'The specified queue does not exist.');
    }
    return queue;
  }

  /**
   * Ends every receive waiting for a message (answering none) and every timer, and saves the
   * messages to `file`, if given.
   */
  close(file: string | undefined): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      if (file !== undefined) this.#save(file);
      this.#journal?.remove();
    } finally {
      for (const timer of this.#timers) clearTimeout(timer);
      this.#timers.clear();
      for (const queue of this.#queues.values()) wake(queue);
    }
  }

  #queueByArn(arn: string | undefined): StoredQueue {
    for (const queue of this.#queues.values()) if (queue.arn === arn) return queue;
    throw sqsError('ResourceNotFoundException', `No queue ${arn}.`);
  }

  #sendBatch(command: SendMessageBatchCommand) {
    const { QueueUrl, Entries = [] } = command.input;
    const queue = this.queueOf(QueueUrl);
    checkBatch(Entries.map((entry) => entry.Id));
    const sent = Entries.map((entry) => ({
      entry,
      body: entry.MessageBody ?? '',
      attributes: attributesOf(entry.MessageAttributes),
    }));
    checkPayload(sent, true);
    const Successful = [];
    const Failed = [];
    for (const { entry, body, attributes } of sent) {
      try {
        const message = this.#enqueue(queue, body, entry.DelaySeconds, attributes);
        Successful.push({ Id: entry.Id, MessageId: message.id, MD5OfMessageBody: message.md5 });
      } catch (error) {
        const code = (error as Error).name;
        Failed.push({ Id: entry.Id, SenderFault: true, Code: code, Message: String(error) });
      }
    }
    return { Successful, Failed };
  }

  #attributes(command: GetQueueAttributesCommand) {
    const queue = this.queueOf(command.input.QueueUrl);
    const at = this.now();
    this.#tidy(queue, at);
    const count = (test: (message: StoredMessage) => boolean) =>
      String(queue.messages.filter(test).length);
    return {
      Attributes: {
        QueueArn: queue.arn,
        ApproximateNumberOfMessages: count((message) => message.visibleAt <= at),
        ApproximateNumberOfMessagesNotVisible: count(
          (message) => message.visibleAt > at && message.receiveCount > 0,
        ),
        ApproximateNumberOfMessagesDelayed: count(
          (message) => message.visibleAt > at && message.receiveCount === 0,
        ),
      },
    };
  }

  /** Drops what outlived the retention; moves what was received too often to its dead letters. */
  #tidy(queue: StoredQueue, at: number): void {
    const retention = (queue.settings.retentionSeconds ?? fourDaysSeconds) * 1000;
    const expired = queue.messages.filter((message) => at - message.sentAt >= retention);
    if (expired.length > 0) {
      queue.messages = queue.messages.filter((message) => !expired.includes(message));
      this.#forget(queue, expired);
    }
    const { deadLetter } = queue.settings;
    if (deadLetter === undefined) return;
    const target = this.#queueByArn(deadLetter.queueArn);
    const overReceived = (message: StoredMessage) =>
      message.visibleAt <= at && message.receiveCount >= deadLetter.maxReceiveCount;
    const moved = queue.messages.filter(overReceived);
    if (moved.length === 0) return;
    queue.messages = queue.messages.filter((message) => !overReceived(message));
    const arrived = moved.map((message) => resting(message, at));
    target.messages.push(...arrived);
    this.#keep(target, arrived);
    this.#forget(queue, moved);
    wake(target);
  }

  #enqueue(
    queue: StoredQueue,
    body: string,
    delaySeconds: number | undefined,
    attributes: StoredAttributes | undefined,
  ): StoredMessage {
    const delay = delaySeconds ?? 0;
    if (!Number.isInteger(delay) || delay < 0 || delay > 900) {
      throw sqsError('InvalidParameterValue', 'DelaySeconds must be an integer from 0 to 900.');
    }
    if (!allowedBody.test(body) || body.length === 0) {
      throw sqsError('InvalidMessageContents', 'The message contains characters SQS refuses.');
    }
    const sentAt = this.now();
    const message: StoredMessage = {
      id: randomUUID(),
      body,
      ...(attributes === undefined ? {} : { attributes }),
      md5: createHash('md5').update(body).digest('hex'),
      sentAt,
      visibleAt: sentAt + delay * 1000,
      receiveCount: 0,
    };
    queue.messages.push(message);
    this.#keep(queue, [message]);
    if (delay === 0) wake(queue);
    else this.#wakeAt(queue, message.visibleAt);
    return message;
  }

  /** Wakes the queue's waiting receives when a message becomes visible. */
  #wakeAt(queue: StoredQueue, at: number): void {
    if (this.#closed) return;
    const timer = setTimeout(
      () => {
        this.#timers.delete(timer);
        wake(queue);
      },
      Math.max(0, at - this.now()),
    );
    timer.unref();
    this.#timers.add(timer);
  }

  /**
   * Takes up to `count` visible messages, each in flight for `visibilitySeconds`, with the
   * attributes `names` asks for (`All`, or by name).
   */
  #take(
    queue: StoredQueue,
    count: number,
    visibilitySeconds: number,
    names: readonly string[] = [],
  ): Message[] {
    const at = this.now();
    this.#tidy(queue, at);
    const visible = queue.messages.filter((message) => message.visibleAt <= at).slice(0, count);
    return visible.map((message) => {
      message.receiveCount += 1;
      message.firstReceivedAt ??= at;
      message.visibleAt = at + visibilitySeconds * 1000;
      message.receiptHandle = randomUUID();
      this.#wakeAt(queue, message.visibleAt);
      return {
        MessageId: message.id,
        ReceiptHandle: message.receiptHandle,
        MD5OfBody: message.md5,
        Body: message.body,
        ...attributesAsked(message.attributes, names),
        Attributes: {
          SenderId: this.#account,
          SentTimestamp: String(message.sentAt),
          ApproximateReceiveCount: String(message.receiveCount),
          ApproximateFirstReceiveTimestamp: String(message.firstReceivedAt),
        },
      };
    });
  }

  async #receive(command: ReceiveMessageCommand, signal: AbortSignal | undefined) {
    const { QueueUrl, MaxNumberOfMessages = 1, WaitTimeSeconds = 0 } = command.input;
    const queue = this.queueOf(QueueUrl);
    const count = MaxNumberOfMessages;
    if (!Number.isInteger(count) || count < 1 || count > largestBatch) {
      throw sqsError('InvalidParameterValue', 'MaxNumberOfMessages must be from 1 to 10.');
    }
    if (!(WaitTimeSeconds >= 0 && WaitTimeSeconds <= 20)) {
      throw sqsError('InvalidParameterValue', 'WaitTimeSeconds must be from 0 to 20.');
    }
    const visibility = command.input.VisibilityTimeout ?? queue.settings.visibilityTimeoutSeconds;
    if (!Number.isInteger(visibility) || visibility < 0 || visibility > 43_200) {
      throw sqsError('InvalidParameterValue', 'VisibilityTimeout must be from 0 to 43200.');
    }
    const deadline = this.now() + WaitTimeSeconds * 1000;
    for (;;) {
      signal?.throwIfAborted();
      // Closed: the messages are saved as they are, none handed out after.
      if (this.#closed) return { Messages: [] };
      const names = command.input.MessageAttributeNames;
      const messages = this.#take(queue, MaxNumberOfMessages, visibility, names);
      if (messages.length > 0 || this.now() >= deadline) return { Messages: messages };
      await waitForMessage(queue, deadline - this.now(), signal);
    }
  }

  /** Writes every queue's messages, a receive's handle aside (a new start hands out new ones). */
  #save(file: string): void {
    writeSavedQueues(file, this.#snapshot());
  }

  #snapshot(): Record<string, SavedMessage[]> {
    return Object.fromEntries(
      [...this.#queues.values()].map((queue) => [queue.name, queue.messages.map(savedOf)]),
    );
  }

  /** Deletes the message a receipt handle names, in the journal too. */
  #delete(queue: StoredQueue, receiptHandle: string | undefined): void {
    const deleted = queue.messages.find((message) => message.receiptHandle === receiptHandle);
    deleteMessage(queue, receiptHandle);
    if (deleted !== undefined) this.#forget(queue, [deleted]);
  }

  /** Journals messages that arrived on a queue (the journal written anew once it is large). */
  #keep(queue: StoredQueue, messages: readonly StoredMessage[]): void {
    if (this.#journal === undefined) return;
    for (const message of messages) this.#journal.sent(queue.name, savedOf(message));
    if (this.#journal.size > journalRewriteBytes) this.#journal.rewrite(this.#snapshot());
  }

  /** Journals messages that left a queue. */
  #forget(queue: StoredQueue, messages: readonly StoredMessage[]): void {
    for (const message of messages) this.#journal?.removed(queue.name, message.id);
  }
}

/** A send's attributes as they are kept: `String` and `Number` ones (SQS refuses an empty one). */
function attributesOf(
  attributes: SendMessageCommand['input']['MessageAttributes'],
): StoredAttributes | undefined {
  if (attributes === undefined || Object.keys(attributes).length === 0) return undefined;
  if (Object.keys(attributes).length > 10) {
    throw sqsError('InvalidParameterValue', 'A message has at most 10 attributes.');
  }
  const kept: Record<string, { DataType: string; StringValue?: string }> = {};
  for (const [name, { DataType = '', StringValue }] of Object.entries(attributes)) {
    if (!/^(String|Number)(\..+)?$/.test(DataType) || !StringValue) {
      throw sqsError('InvalidParameterValue', `The message attribute ${name} has no String value.`);
    }
    kept[name] = { DataType, StringValue };
  }
  return kept;
}

/** The attributes a receive asked for, when the message has any of them. */
function attributesAsked(attributes: StoredAttributes | undefined, names: readonly string[]) {
  const asked = Object.entries(attributes ?? {}).filter(
    ([name]) => names.includes('All') || names.includes('.*') || names.includes(name),
  );
  return asked.length === 0 ? {} : { MessageAttributes: Object.fromEntries(asked) };
}
