/**
 * Lambda's DynamoDB event source mapping, imitated on DynamoDB Local's stream as AWS documents it
 * ("Using Lambda with DynamoDB", "Lambda parameters for Amazon DynamoDB event source mappings",
 * "Retaining discarded records"), so the deployed fan-out handler runs unchanged on this machine:
 *
 * - every shard read in order, a child shard only once its parent has ended;
 * - only the records the filter passes (`eventNames`), up to `batchSize` to an invocation;
 * - with a partial batch response, a retry from the lowest failed sequence number; a thrown error
 *   splits the batch in two (BisectBatchOnFunctionError) before the retry;
 * - after `retryAttempts` retries, the rest of the batch is discarded to the on-failure
 *   destination, given Lambda's invocation record with the records in its `payload` (as an S3
 *   destination gets it).
 *
 * It starts at the stream's start (TRIM_HORIZON) or at its end (LATEST). DynamoDB Local fails a
 * LATEST iterator's read once another table is written, so LATEST is done by reading every shard
 * to its end first without invoking; every later read resumes after the last record read. An
 * outage of the store (iterators gone stale, calls failing) is waited out: reading resumes after
 * the last record read, so nothing is skipped.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as wait } from 'node:timers/promises';
import {
  type _Record,
  DescribeStreamCommand,
  type DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import type { InvocationContext, Logger } from '../../functions/shared/platform/logger.ts';
import { readStreamCheckpoint, writeStreamCheckpoint } from './stream-checkpoint.ts';

/** A running mapping; `stop` waits for the batch in hand to finish. */
export interface RunningMapping {
  /** Invocations so far. */
  readonly invocations: () => number;
  stop(): Promise<void>;
}

/** What Lambda writes to an on-failure destination for a discarded stream batch. */
export interface StreamFailureRecord {
  readonly requestContext: {
    readonly requestId: string;
    readonly functionArn: string;
    /**
     * Lambda's `RetryAttemptsExhausted`, or this mapping's own `StoppedBeforeRetry`: stopped while
     * the batch waited for a retry (`npm start` stopping), it is kept rather than lost.
     */
    readonly condition: 'RetryAttemptsExhausted' | 'StoppedBeforeRetry';
    readonly approximateInvokeCount: number;
  };
  readonly responseContext: {
    readonly statusCode: number;
    readonly executedVersion: string;
    readonly functionError: string;
  };
  readonly version: '1.0';
  readonly timestamp: string;
  readonly DDBStreamBatchInfo: {
    readonly shardId: string;
    readonly startSequenceNumber: string | undefined;
    readonly endSequenceNumber: string | undefined;
    readonly batchSize: number;
    readonly streamArn: string;
  };
  /** The discarded records, `{"Records": […]}` as JSON. */
  readonly payload: string;
}

export interface StreamMappingOptions {
  readonly streams: DynamoDBStreamsClient;
  readonly streamArn: string;
  /** Invoked as Lambda does, with a context naming the invocation. */
  readonly handler: (
    event: DynamoDBStreamEvent,
    context: InvocationContext,
  ) => Promise<DynamoDBBatchResponse>;
  readonly functionArn: string;
  readonly startingPosition: 'TRIM_HORIZON' | 'LATEST';
  /** The event filter: only records with these event names. @default every kind */
  readonly eventNames?: readonly string[];
  /** @default 100 */
  readonly batchSize?: number;
  /** @default 10 */
  readonly retryAttempts?: number;
  /** The on-failure destination: takes a discarded batch's invocation record. */
  readonly onFailure: (record: StreamFailureRecord) => Promise<void>;
  /** How long to wait after an empty read. @default 100 */
  readonly pollIntervalMilliseconds?: number;
  /**
   * Where the position is kept after every batch (`stream-checkpoint.ts`): a start that finds it
   * resumes there, whatever `startingPosition` says. @default nowhere
   */
  readonly checkpointFile?: string;
  /** Where a failed read or an unkept batch is told. */
  readonly logger: Logger;
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
/** The pause before a batch's retry: doubling from 100 ms to 5 s (AWS does not say its own). */
const retryPause = (attempt: number) => Math.min(100 * 2 ** attempt, 5_000);

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

  /** An iterator after the last record read, or at the shard's start when none was read. */
  const renewIterator = async (shardId: string, state: ShardState) => {
    const { ShardIterator } = await streams.send(
      new GetShardIteratorCommand({
        StreamArn: streamArn,
        ShardId: shardId,
        ...(state.after === undefined
          ? { ShardIteratorType: 'TRIM_HORIZON' }
          : { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: state.after }),
      }),
      send,
    );
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
 * Invokes the handler with a shard's batch as Lambda does, retrying and discarding; `signal`
 * (the mapping stopping) ends the retries.
 */
function batchInvoker(options: StreamMappingOptions) {
  let invocations = 0;

  /** The index of the first record to retry from, or -1 when the batch succeeded. */
  const invokeOnce = async (records: readonly _Record[]): Promise<number | 'error'> => {
    invocations += 1;
    const event = { Records: records } as unknown as DynamoDBStreamEvent;
    try {
      const response = await options.handler(event, { awsRequestId: randomUUID() });
      // No list, or an empty one, is a success (Lambda reads only the failures named).
      const batchItemFailures = response?.batchItemFailures ?? [];
      if (batchItemFailures.length === 0) return -1;
      const indexes = batchItemFailures.map((failure) =>
        records.findIndex((record) => record.dynamodb?.SequenceNumber === failure.itemIdentifier),
      );
      // An identifier that names no record fails the whole batch.
      return indexes.includes(-1) ? 0 : Math.min(...indexes);
    } catch {
      return 'error';
    }
  };

  /**
   * Invokes with `records` until they are handled or the retries are used up; a thrown error
   * splits what failed in two, each half retried on its own. Stopped while a batch waits for its
   * retry, it keeps what failed as one discarded batch, so that a stop loses no record.
   */
  const invoke = async (
    shardId: string,
    records: readonly _Record[],
    signal: AbortSignal,
    attempt = 0,
  ): Promise<void> => {
    if (records.length === 0) return;
    const outcome = await invokeOnce(records);
    if (outcome === -1) return;
    const failing = records.slice(outcome === 'error' ? 0 : outcome);
    if (attempt >= (options.retryAttempts ?? 10)) {
      return discard(shardId, failing, attempt + 1, 'RetryAttemptsExhausted');
    }
    await sleep(retryPause(attempt), signal);
    if (signal.aborted) return discard(shardId, failing, attempt + 1, 'StoppedBeforeRetry');
    if (outcome === 'error' && failing.length > 1) {
      const half = Math.ceil(failing.length / 2);
      await invoke(shardId, failing.slice(0, half), signal, attempt + 1);
      await invoke(shardId, failing.slice(half), signal, attempt + 1);
      return;
    }
    await invoke(shardId, failing, signal, attempt + 1);
  };

  /**
   * Hands a discarded batch to the on-failure destination, as Lambda's invocation record. One the
   * destination does not take is logged whole, at error level: the records are then in the log.
   */
  const discard = async (
    shardId: string,
    records: readonly _Record[],
    invokeCount: number,
    condition: StreamFailureRecord['requestContext']['condition'],
  ) => {
    const record: StreamFailureRecord = {
      requestContext: {
        requestId: randomUUID(),
        functionArn: options.functionArn,
        condition,
        approximateInvokeCount: invokeCount,
      },
      responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
      version: '1.0',
      timestamp: new Date().toISOString(),
      DDBStreamBatchInfo: {
        shardId,
        startSequenceNumber: records[0]?.dynamodb?.SequenceNumber,
        endSequenceNumber: records.at(-1)?.dynamodb?.SequenceNumber,
        batchSize: records.length,
        streamArn: options.streamArn,
      },
      payload: JSON.stringify({ Records: records }),
    };
    try {
      await options.onFailure(record);
    } catch (error) {
      options.logger.error('could not keep a discarded stream batch; its records follow', {
        error,
        record,
      });
    }
  };

  return { invoke, invocations: () => invocations };
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

/** Waits, or less when `signal` aborts (then without an error). */
async function sleep(milliseconds: number, signal: AbortSignal): Promise<void> {
  await wait(milliseconds, undefined, { signal }).catch(() => undefined);
}
