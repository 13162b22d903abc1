/**
 * The in-process queues' file: every queue's messages by its name, written when `npm start` stops
 * and taken up (then removed, so that a later crash cannot bring them back twice) when it starts.
 * Written to a temporary file first and renamed, so a stop cut short leaves the last whole file.
 */
import {
  appendFileSync,
  existsSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import * as v from 'valibot';

const savedMessageSchema = v.object({
  id: v.string(),
  body: v.string(),
  attributes: v.optional(
    v.record(v.string(), v.object({ DataType: v.string(), StringValue: v.optional(v.string()) })),
  ),
  sentAt: v.number(),
  visibleAt: v.number(),
  receiveCount: v.number(),
  firstReceivedAt: v.optional(v.number()),
});

const savedQueuesSchema = v.object({
  version: v.literal(1),
  queues: v.record(v.string(), v.array(savedMessageSchema)),
});

export type SavedMessage = v.InferOutput<typeof savedMessageSchema>;

/**
 * The messages saved in `file` by queue name; none when there is no file. The caller removes it
 * ({@link removeSavedQueues}) once they are kept elsewhere.
 * @throws Error naming the file when it holds something else.
 */
export function readSavedQueues(
  file: string | undefined,
): Readonly<Record<string, readonly SavedMessage[]>> {
  if (file === undefined || !existsSync(file)) return {};
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    json = undefined;
  }
  const saved = v.safeParse(savedQueuesSchema, json);
  if (!saved.success) {
    throw new Error(`${file} holds no saved queues (delete it to start with empty queues).`);
  }
  return saved.output.queues;
}

/** Removes the saved file, so that a later start cannot take its messages up twice. */
export function removeSavedQueues(file: string | undefined): void {
  if (file !== undefined) rmSync(file, { force: true });
}

/** Writes the messages by queue name to `file` (0600), whole or not at all. */
export function writeSavedQueues(
  file: string,
  queues: Readonly<Record<string, readonly SavedMessage[]>>,
): void {
  const partial = `${file}.partial`;
  writeFileSync(partial, JSON.stringify({ version: 1, queues }), { mode: 0o600 });
  renameSync(partial, file);
}

/**
 * The queues' journal, beside the saved file: every send and every removal appended as a line
 * as it happens, so that a start after a crash (SIGKILL: no stop, so no saved file) takes up the
 * messages sent and not deleted, as SQS would still hold them. A clean stop writes the saved file
 * and removes the journal; a start writes it anew with the messages it took up.
 */
export class QueueJournal {
  readonly #file: string;
  #bytes = 0;

  constructor(file: string) {
    this.#file = file;
  }

  /** Bytes appended since the journal was last written anew. */
  get size(): number {
    return this.#bytes;
  }

  /** The messages the journal holds by queue name: sent, and not removed since. */
  read(): Record<string, SavedMessage[]> {
    if (!existsSync(this.#file)) return {};
    const queues = new Map<string, Map<string, SavedMessage>>();
    for (const line of readFileSync(this.#file, 'utf8').split('\n')) {
      let entry: unknown;
      try {
        entry = JSON.parse(line);
      } catch {
        continue; // The last line of a write cut short.
      }
      const parsed = v.safeParse(journalEntrySchema, entry);
      if (!parsed.success) continue;
      const { queue, sent, removed } = parsed.output;
      const messages = queues.get(queue) ?? new Map<string, SavedMessage>();
      queues.set(queue, messages);
      if (sent !== undefined) messages.set(sent.id, sent);
      if (removed !== undefined) messages.delete(removed);
    }
    return Object.fromEntries(
      [...queues].map(([name, messages]) => [name, [...messages.values()]]),
    );
  }

  /** Writes the journal anew as these messages, whole or not at all. */
  rewrite(queues: Readonly<Record<string, readonly SavedMessage[]>>): void {
    const lines = Object.entries(queues).flatMap(([queue, messages]) =>
      messages.map((sent) => JSON.stringify({ queue, sent })),
    );
    const partial = `${this.#file}.partial`;
    writeFileSync(partial, lines.map((line) => `${line}\n`).join(''), { mode: 0o600 });
    renameSync(partial, this.#file);
    this.#bytes = 0;
  }

  sent(queue: string, sent: SavedMessage): void {
    this.#append(JSON.stringify({ queue, sent }));
  }

  removed(queue: string, removed: string): void {
    this.#append(JSON.stringify({ queue, removed }));
  }

  remove(): void {
    rmSync(this.#file, { force: true });
  }

  #append(line: string): void {
    appendFileSync(this.#file, `${line}\n`, { mode: 0o600 });
    this.#bytes += line.length + 1;
  }
}

const journalEntrySchema = v.object({
  queue: v.string(),
  sent: v.optional(savedMessageSchema),
  removed: v.optional(v.string()),
});
