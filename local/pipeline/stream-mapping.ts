/**
 * Lambda's DynamoDB event source mapping, imitated on DynamoDB Local's stream as AWS documents it
 * ("Using Lambda with DynamoDB"), so the deployed fan-out runs unchanged here: every shard read in
 * order (a child once its parent has ended), only the records the filter passes, each batch handed
 * to `stream-batches.ts` (retries, bisection, discards). It starts at TRIM_HORIZON, at LATEST
 * (DynamoDB Local fails a LATEST iterator once another table is written, so every shard is read to
 * its end first), or where its checkpoint says; an outage of the store is waited out.
 */
import {
  type _Record,
  DescribeStreamCommand,
  type DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { type BatchInvokerOptions, batchInvoker, sleep } from './stream-batches.ts';
import { readStreamCheckpoint, writeStreamCheckpoint } from './stream-checkpoint.ts';

/** A running mapping; `stop` waits for the batch in hand to finish. */
export interface RunningMapping {
  /** Invocations so far. */
  readonly invocations: () => number;
  stop(): Promise<void>;
}

export interface StreamMappingOptions extends BatchInvokerOptions {
  readonly streams: DynamoDBStreamsClient;
  readonly startingPosition: 'TRIM_HORIZON' | 'LATEST';
  /** The event filter: only records with these event names. @default every kind */
  readonly eventNames?: readonly string[];
  /** @default 100 */
  readonly batchSize?: number;
  /** How long to wait after an empty read. @default 100 */
  readonly pollIntervalMilliseconds?: number;
  /**
   * Where the position is kept after every batch (`stream-checkpoint.ts`): a start that finds it
   * resumes there, whatever `startingPosition` says. @default nowhere
   */
  readonly checkpointFile?: string;
}

/**
 * Each shard: its parent, the iterator to read next, the last sequence number read, and whether
 * it has ended.
 */
interface ShardState {
  readonly parent: string | undefined;
  iterator?: string;
  after?: string;
  closed: boolean;
}

/** How often the stream's shards are looked up again (DynamoDB Local may start new ones). */
const shardRefreshMilliseconds = 2_000;

/**
 * Starts reading; resolves once the shards are known (and, for LATEST, read to their end), so a
 * write after this is handed on.
 */
export async function startStreamMapping(options: StreamMappingOptions): Promise<RunningMapping> {
  const stopping = new AbortController();
  const shards = new Map<string, ShardState>();
  const reader = shardReader(options, shards, stopping.signal);
  const invoker = batchInvoker(options);
  const kept = await resumablePlaces(options);
  // Shards the checkpoint does not name began after it: they are read from their start.
  for (const [shardId, place] of kept ?? []) shards.set(shardId, { ...place });
  const latest = kept === undefined && options.startingPosition === 'LATEST';
  await reader.refreshShards(latest);
  if (latest) {
    for (const [shardId, state] of shards)
      if (!state.closed) await reader.skipToEnd(shardId, state);
  }
  keepPlace(options, shards);
  const polling = pollShards(options, reader, invoker, shards, stopping.signal);
  return {
    invocations: invoker.invocations,
    stop: async () => {
      stopping.abort();
      await polling;
      await readToTheEnd(options, invoker, shards);
    },
  };
}

/** How long a stop may spend handing on what the stream still holds. */
const stopReadMilliseconds = 5_000;

/**
 * At a stop, what the stream holds up to now is handed on too (or kept, should it fail), as
 * Lambda would have handed it on: a plant stored a moment before `npm start` stops is not left
 * for the next LATEST start to skip. Within `stopReadMilliseconds`: a store that does not answer
 * (or that someone else keeps writing) is told and left, and a batch still failing then is kept.
 */
async function readToTheEnd(
  options: StreamMappingOptions,
  invoker: ReturnType<typeof batchInvoker>,
  shards: Map<string, ShardState>,
): Promise<void> {
  const deadline = AbortSignal.timeout(stopReadMilliseconds);
  const reader = shardReader(options, shards, deadline);
  try {
    await reader.refreshShards(false);
    while ((await readEveryShard(options, reader, invoker, shards, deadline)) > 0) {
      if (deadline.aborted) throw new Error(`still reading after ${stopReadMilliseconds} ms`);
    }
  } catch (error) {
    options.logger.warn('could not read the rest of the plants stream at the stop', { error });
  }
}

/** The reading loop: new shards every few seconds, every readable shard read, a pause when idle. */
async function pollShards(
  options: StreamMappingOptions,
  reader: ReturnType<typeof shardReader>,
  invoker: ReturnType<typeof batchInvoker>,
  shards: Map<string, ShardState>,
  signal: AbortSignal,
): Promise<void> {
  let refreshedAt = Date.now();
  while (!signal.aborted) {
    try {
      if (Date.now() - refreshedAt > shardRefreshMilliseconds) {
        refreshedAt = Date.now();
        await reader.refreshShards(false);
      }
      const read = await readEveryShard(options, reader, invoker, shards, signal);
      if (read === 0) await sleep(options.pollIntervalMilliseconds ?? 100, signal);
    } catch (error) {
      if (signal.aborted) break;
      // The store paused or restarted: iterators may have expired. Every open shard resumes
      // after its last record handed on once the store answers again.
      options.logger.warn('could not read the plants stream; retrying', { error });
      for (const state of shards.values()) state.iterator = undefined;
      await sleep(1_000, signal);
    }
  }
}

/**
 * One read of every shard that can be read, each batch handed on (retries end when `signal`
 * aborts); the records read, and the shards that ended, so that a caller reads on to a child.
 */
async function readEveryShard(
  options: StreamMappingOptions,
  reader: ReturnType<typeof shardReader>,
  invoker: ReturnType<typeof batchInvoker>,
  shards: Map<string, ShardState>,
  signal: AbortSignal,
): Promise<number> {
  const eventNames = options.eventNames;
  let read = 0;
  for (const [shardId, state] of shards) {
    if (state.closed || shards.get(state.parent ?? '')?.closed === false) continue;
    const { records, ended } = await reader.read(shardId, state);
    read += records.length;
    const passed = records.filter(
      (record) => eventNames === undefined || eventNames.includes(record.eventName ?? ''),
    );
    const readAt = Date.now();
    const lambdaRecords = passed.map((record) => lambdaRecordOf(record, options, readAt));
    await invoker.invoke(shardId, lambdaRecords, signal);
    // Handed on (or discarded to the destination): read on after the last of them. A shard
    // without a next iterator has ended (its children are found by the next refresh).
    state.after = records.at(-1)?.dynamodb?.SequenceNumber ?? state.after;
    if (ended) {
      state.closed = true;
      read += 1;
    }
    if (records.length > 0 || ended) keepPlace(options, shards);
  }
  return read;
}

/**
 * The checkpoint's places, when the stream still has a shard it names (a store whose stream was
 * made anew has none of them: then the checkpoint says nothing about it).
 */
async function resumablePlaces(options: StreamMappingOptions) {
  const kept = readStreamCheckpoint(options.checkpointFile, options.streamArn);
  if (kept === undefined) return undefined;
  const { StreamDescription } = await options.streams.send(
    new DescribeStreamCommand({ StreamArn: options.streamArn }),
  );
  const current = (StreamDescription?.Shards ?? []).map((shard) => shard.ShardId);
  return current.some((shardId) => shardId !== undefined && kept.has(shardId)) ? kept : undefined;
}

/** Keeps the shards' places, when the mapping has a checkpoint file. */
function keepPlace(options: StreamMappingOptions, shards: ReadonlyMap<string, ShardState>): void {
  if (options.checkpointFile !== undefined) {
    writeStreamCheckpoint(options.checkpointFile, options.streamArn, shards);
  }
}

/** The stream calls on the shards' states; `signal` aborts them. */
function shardReader(
  options: StreamMappingOptions,
  shards: Map<string, ShardState>,
  signal?: AbortSignal,
) {
  const { streams, streamArn } = options;
  const send = { abortSignal: signal };

  /**
   * An iterator after the last record read, or at the shard's start when none was read. A
   * position the stream no longer holds (a checkpoint older than its 24 hours) reads on from the
   * oldest record it has, and a shard it no longer has is done with.
   */
  const renewIterator = async (shardId: string, state: ShardState) => {
    let ShardIterator: string | undefined;
    try {
      ({ ShardIterator } = await streams.send(
        new GetShardIteratorCommand({
          StreamArn: streamArn,
          ShardId: shardId,
          ...(state.after === undefined
            ? { ShardIteratorType: 'TRIM_HORIZON' }
            : { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: state.after }),
        }),
        send,
      ));
    } catch (error) {
      const name = (error as { name?: unknown }).name;
      if (name === 'TrimmedDataAccessException' && state.after !== undefined) {
        options.logger.warn(
          'the stream no longer holds the last position read; reading on from its oldest record',
          { shardId, after: state.after },
        );
        state.after = undefined;
        return renewIterator(shardId, state);
      }
      if (name !== 'ResourceNotFoundException') throw error;
      ShardIterator = undefined;
    }
    state.iterator = ShardIterator;
    if (ShardIterator === undefined) state.closed = true;
  };

  /**
   * The shard's next records, its iterator moved on. DynamoDB Local fails an iterator's read once
   * another table has been written since it was made (TrimmedDataAccessException), as AWS does
   * an expired one: Lambda's poller makes it again after the last record read, and so does this.
   */
  const read = async (
    shardId: string,
    state: ShardState,
  ): Promise<{ records: _Record[]; ended: boolean }> => {
    for (let attempt = 1; ; attempt += 1) {
      if (state.iterator === undefined) await renewIterator(shardId, state);
      if (state.iterator === undefined) return { records: [], ended: true };
      try {
        const { Records = [], NextShardIterator } = await streams.send(
          new GetRecordsCommand({ ShardIterator: state.iterator, Limit: options.batchSize ?? 100 }),
          send,
        );
        state.iterator = NextShardIterator;
        return { records: Records, ended: NextShardIterator === undefined };
      } catch (error) {
        const name = (error as { name?: unknown }).name;
        const stale = name === 'TrimmedDataAccessException' || name === 'ExpiredIteratorException';
        if (!stale || attempt === 3) throw error;
        state.iterator = undefined;
      }
    }
  };

  return {
    read,
    /** Looks for new shards; at the first look of a LATEST start, ended ones hold only the past. */
    refreshShards: async (skipEnded: boolean) => {
      const { StreamDescription } = await streams.send(
        new DescribeStreamCommand({ StreamArn: streamArn }),
        send,
      );
      for (const shard of StreamDescription?.Shards ?? []) {
        const shardId = shard.ShardId;
        if (shardId === undefined || shards.has(shardId)) continue;
        const ended = shard.SequenceNumberRange?.EndingSequenceNumber !== undefined;
        shards.set(shardId, { parent: shard.ParentShardId, closed: skipEnded && ended });
      }
    },
    /** Reads an open shard to its end without handing anything on. */
    skipToEnd: async (shardId: string, state: ShardState) => {
      for (;;) {
        const { records, ended } = await read(shardId, state);
        state.after = records.at(-1)?.dynamodb?.SequenceNumber ?? state.after;
        if (ended) state.closed = true;
        if (records.length === 0 || ended) return;
      }
    },
  };
}

/**
 * A record as Lambda hands it to a function: the stream's ARN added, and its time in seconds since
 * the epoch (the SDK reads it as a Date). AWS gives that time rounded down to the second
 * (`ApproximateCreationDateTime`, DynamoDB Streams API reference, StreamRecord); DynamoDB Local
 * rounds it down to the minute. A record is read moments after its write, so the time it is read,
 * rounded down to the second and kept within the record's minute, is that time.
 */
export function lambdaRecordOf(
  record: _Record,
  options: Pick<StreamMappingOptions, 'streamArn'>,
  readAt: number,
): _Record {
  const stated = record.dynamodb?.ApproximateCreationDateTime as Date | number | undefined;
  const statedSeconds = stated instanceof Date ? stated.getTime() / 1000 : stated;
  const lambdaRecord = { ...record, eventSourceARN: options.streamArn } as _Record;
  // Nothing to go by: kept as stated.
  if (statedSeconds === undefined || !Number.isFinite(statedSeconds)) return lambdaRecord;
  let seconds = statedSeconds;
  if (statedSeconds % 60 === 0) {
    const minute = Math.floor(statedSeconds / 60) * 60;
    seconds = Math.min(Math.max(Math.floor(readAt / 1000), minute), minute + 59);
  }
  return {
    ...lambdaRecord,
    dynamodb: { ...record.dynamodb, ApproximateCreationDateTime: seconds as never },
  };
}
