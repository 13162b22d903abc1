/**
 * Reads DynamoDB Local's stream of the plants table from now on, as Lambda's stream mapping reads
 * DynamoDB's for the deployed fan-out: every shard, in order, each batch handed on before the next
 * is read, a batch that could not be handed on read again after a pause.
 */

import { setTimeout as wait } from 'node:timers/promises';
import {
  DescribeStreamCommand,
  type DynamoDBStreamsClient,
  GetRecordsCommand,
  type GetRecordsCommandOutput,
  GetShardIteratorCommand,
  type ShardIteratorType,
} from '@aws-sdk/client-dynamodb-streams';
import type { Logger } from '../functions/shared/platform/logger.ts';
import type { PlantStreamRecord } from '../functions/shared/webhooks/plant-events.ts';

/** How often the stream's shards are looked up again (DynamoDB Local may start new ones). */
const shardRefreshMilliseconds = 2_000;

export interface PlantsStreamOptions {
  readonly streams: DynamoDBStreamsClient;
  readonly streamArn: string;
  /**
   * Takes a batch of records; answers the first it could not take, which is read again (with the
   * ones after it) after a pause.
   */
  readonly handle: (records: PlantStreamRecord[]) => Promise<{ failedRecord?: unknown }>;
  /** How long to wait after an empty read. */
  readonly pollIntervalMilliseconds: number;
  readonly logger: Logger;
  /** Stops the reading. */
  readonly signal: AbortSignal;
}

/**
 * Each shard: where reading starts when its iterator must be made (again), the iterator to read
 * next, the last sequence number read, and whether the shard has ended.
 */
interface ShardState {
  readonly start: ShardIteratorType;
  iterator?: string;
  after?: string;
  closed: boolean;
}

/**
 * A stream record with AWS's time of it. AWS gives a record's time rounded down to the second
 * (`ApproximateCreationDateTime`, DynamoDB Streams API reference, StreamRecord); DynamoDB Local
 * rounds it down to the minute. The dispatcher reads a record moments after its write, so the
 * time it is read, rounded down to the second and kept within the record's minute, is that time.
 */
export function timedToTheSecond<Streamed extends PlantStreamRecord>(
  record: Streamed,
  now: number,
): Streamed {
  const stated = record.dynamodb?.ApproximateCreationDateTime;
  const statedSeconds = stated instanceof Date ? stated.getTime() / 1000 : stated;
  // Nothing to go by, or a time finer than the minute: kept as stated.
  if (statedSeconds === undefined || !Number.isFinite(statedSeconds)) return record;
  if (statedSeconds % 60 !== 0) return record;
  const minute = Math.floor(statedSeconds / 60) * 60;
  const seconds = Math.min(Math.max(Math.floor(now / 1000), minute), minute + 59);
  return { ...record, dynamodb: { ...record.dynamodb, ApproximateCreationDateTime: seconds } };
}

/**
 * Catches every shard up to now (what it holds happened before the start and is not handed on),
 * then reads on until `signal` aborts. Resolves once caught up, with the reading's end.
 */
export async function readPlantsStream(
  options: PlantsStreamOptions,
): Promise<{ readonly finished: Promise<void> }> {
  const shards = new Map<string, ShardState>();
  const reader = shardReader(options, shards);
  await reader.refreshShards(true);
  // Caught up now, before the API takes its first request: a plant created after this is sent.
  for (const [shardId, state] of shards) {
    if (!state.closed) await reader.catchUp(shardId, state);
  }
  return { finished: pollShards(options, shards, reader) };
}

/** The reading loop: new shards every few seconds, every open shard read, a pause when idle. */
async function pollShards(
  options: PlantsStreamOptions,
  shards: Map<string, ShardState>,
  reader: ReturnType<typeof shardReader>,
): Promise<void> {
  const { signal, logger } = options;
  let refreshedAt = Date.now();
  while (!signal.aborted) {
    try {
      if (Date.now() - refreshedAt > shardRefreshMilliseconds) {
        refreshedAt = Date.now();
        await reader.refreshShards(false);
      }
      const read = await reader.readShards();
      if (read === 0) await sleep(options.pollIntervalMilliseconds, signal);
    } catch (error) {
      if (signal.aborted) break;
      // The store paused or restarted: iterators may have expired. Every open shard resumes
      // after its last record read (or from its start) once the store answers again.
      logger.warn('could not read the plants stream; retrying', { error });
      for (const state of shards.values()) state.iterator = undefined;
      await sleep(1_000, signal);
    }
  }
}

/** The stream calls on the shards' states. */
function shardReader(options: PlantsStreamOptions, shards: Map<string, ShardState>) {
  const { streams, streamArn } = options;
  const send = { abortSignal: options.signal };

  /** An iterator after the last record read, or at the shard's start when none was read. */
  const renewIterator = async (shardId: string, state: ShardState) => {
    const { ShardIterator } = await streams.send(
      new GetShardIteratorCommand({
        StreamArn: streamArn,
        ShardId: shardId,
        ...(state.after === undefined
          ? { ShardIteratorType: state.start }
          : { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: state.after }),
      }),
      send,
    );
    state.iterator = ShardIterator;
    if (ShardIterator === undefined) state.closed = true;
  };

  /**
   * The shard's next records. DynamoDB Local fails an iterator's read once another table has been
   * written since it was made (TrimmedDataAccessException), as AWS does an expired one: both are
   * made again, after the last record read, and read at once.
   */
  const getRecords = async (
    shardId: string,
    state: ShardState,
  ): Promise<Pick<GetRecordsCommandOutput, 'Records' | 'NextShardIterator'>> => {
    for (let attempt = 1; ; attempt += 1) {
      if (state.iterator === undefined) await renewIterator(shardId, state);
      if (state.iterator === undefined) return {};
      try {
        return await streams.send(
          new GetRecordsCommand({ ShardIterator: state.iterator, Limit: 1000 }),
          send,
        );
      } catch (error) {
        const name = (error as { name?: unknown }).name;
        const stale = name === 'TrimmedDataAccessException' || name === 'ExpiredIteratorException';
        if (!stale || attempt === 3) throw error;
        state.iterator = undefined;
      }
    }
  };

  return {
    /** Looks for shards, each read from its start (the first look's are caught up first). */
    refreshShards: async (first: boolean) => {
      const { StreamDescription } = await streams.send(
        new DescribeStreamCommand({ StreamArn: streamArn }),
        send,
      );
      for (const shard of StreamDescription?.Shards ?? []) {
        const shardId = shard.ShardId;
        if (shardId === undefined || shards.has(shardId)) continue;
        // A shard already ended at the first look holds only records from before the start.
        const endedBefore = first && shard.SequenceNumberRange?.EndingSequenceNumber !== undefined;
        shards.set(shardId, { start: 'TRIM_HORIZON', closed: endedBefore });
      }
    },

    /** Reads every open shard once; returns how many records came. */
    readShards: async (): Promise<number> => {
      let read = 0;
      for (const [shardId, state] of shards) {
        if (state.closed) continue;
        const { Records = [], NextShardIterator } = await getRecords(shardId, state);
        state.iterator = NextShardIterator;
        // No next iterator: the shard has ended (its children are found by the next refresh).
        if (NextShardIterator === undefined) state.closed = true;
        const timed = Records.map((record) => timedToTheSecond(record, Date.now()));
        const { failedRecord } = await options.handle(timed as PlantStreamRecord[]);
        // Read up to the record that could not be taken; it is read again after a pause.
        const failedAt = failedRecord === undefined ? -1 : timed.indexOf(failedRecord as never);
        const done = failedAt === -1 ? timed : timed.slice(0, failedAt);
        state.after = done.at(-1)?.dynamodb?.SequenceNumber ?? state.after;
        if (failedAt !== -1) throw new Error('Some webhook deliveries could not be queued.');
        read += Records.length;
      }
      return read;
    },

    /**
     * Reads an open shard to its end without handing anything on. Every later read resumes after
     * the last record (AFTER_SEQUENCE_NUMBER), never at LATEST: DynamoDB Local fails a LATEST
     * iterator's read (TrimmedDataAccessException) once another table has been written, and a
     * LATEST iterator made again would skip what came meanwhile.
     */
    catchUp: async (shardId: string, state: ShardState) => {
      await renewIterator(shardId, state);
      while (state.iterator !== undefined) {
        const { Records = [], NextShardIterator } = await getRecords(shardId, state);
        state.iterator = NextShardIterator;
        if (NextShardIterator === undefined) state.closed = true;
        if (Records.length === 0) break;
        state.after = Records.at(-1)?.dynamodb?.SequenceNumber ?? state.after;
      }
    },
  };
}

/** Waits, or less when `signal` aborts (then without an error). */
async function sleep(milliseconds: number, signal: AbortSignal): Promise<void> {
  await wait(milliseconds, undefined, { signal }).catch(() => undefined);
}
