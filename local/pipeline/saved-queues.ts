/**
 * The in-process queues' file: every queue's messages by its name, written when `npm start` stops
 * and taken up (then removed, so that a later crash cannot bring them back twice) when it starts.
 * Written to a temporary file first and renamed, so a stop cut short leaves the last whole file.
 */
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import * as v from 'valibot';

const savedMessageSchema = v.object({
  id: v.string(),
  body: v.string(),
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
 * The messages saved in `file` by queue name, the file removed; none when there is no file.
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
  rmSync(file);
  return saved.output.queues;
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
