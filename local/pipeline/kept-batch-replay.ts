/**
 * `npm start`'s replay of the stream batches the fan-out gave up on (kept in `stream-failures/`,
 * as a deployed stage keeps them in its bucket), as the stage's scheduled replay does: each kept
 * batch is handed to the fan-out again after 1 s, 2 s, 4 s … (5 minutes apart at most) until it
 * is queued, and its file is then removed. Nobody has to act; a batch still failing after its
 * first eight replays is told at error level, as the stage's alarm would.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import type { Logger } from '../../functions/shared/platform/logger.ts';

export interface KeptBatchReplayOptions {
  /** Where the batches are kept, one invocation record a file. */
  readonly folder: string;
  /** The fan-out, as the stream mapping invokes it. */
  readonly fanout: (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse>;
  readonly logger: Logger;
  /** How often the folder is looked at. @default 1000 */
  readonly checkMilliseconds?: number;
}

/** The wait before a batch's next replay: doubling from 1 s, 5 minutes at most. */
export const replayWait = (replays: number) => Math.min(1_000 * 2 ** replays, 300_000);

/** Replays a batch this often without success before it is told at error level. */
const failingReplays = 8;

/** Starts looking for kept batches; `stop` waits for a replay in hand. */
export function startKeptBatchReplay(options: KeptBatchReplayOptions): { stop(): Promise<void> } {
  const due = new Map<string, { replays: number; at: number }>();
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const replay = async (file: string) => {
    const state = due.get(file) ?? { replays: 0, at: 0 };
    if (Date.now() < state.at) return;
    let failed: number;
    try {
      const { payload } = JSON.parse(readFileSync(join(options.folder, file), 'utf8'));
      const event = (
        typeof payload === 'string' ? JSON.parse(payload) : payload
      ) as DynamoDBStreamEvent;
      const { batchItemFailures } = await options.fanout(event);
      failed = batchItemFailures.length;
    } catch (error) {
      options.logger.warn('could not replay a kept stream batch', { file, error });
      failed = 1;
    }
    if (failed === 0) {
      rmSync(join(options.folder, file), { force: true });
      due.delete(file);
      options.logger.info('kept stream batch replayed', { file, replays: state.replays + 1 });
      return;
    }
    const replays = state.replays + 1;
    due.set(file, { replays, at: Date.now() + replayWait(replays) });
    if (replays === failingReplays) {
      options.logger.error('kept stream batch still failing after its replays', { file, replays });
    }
  };
  const check = () => {
    running = running.then(async () => {
      let files: string[];
      try {
        files = readdirSync(options.folder).filter((name) => name.endsWith('.json'));
      } catch {
        return; // No batch kept yet.
      }
      for (const file of files.sort()) if (!stopped) await replay(file);
    });
  };
  const timer = setInterval(check, options.checkMilliseconds ?? 1_000);
  timer.unref();
  return {
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
