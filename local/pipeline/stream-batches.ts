/**
 * Lambda's handling of one shard's batch for a DynamoDB stream mapping ("Using Lambda with
 * DynamoDB", "Retaining discarded records"): a partial batch response retried from the lowest
 * failed record, a thrown error splitting the batch in two (BisectBatchOnFunctionError), and
 * after `retryAttempts` retries the rest discarded to the on-failure destination.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as wait } from 'node:timers/promises';
import type { _Record } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import type { InvocationContext, Logger } from '../../functions/shared/platform/logger.ts';

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

/** What invoking a batch needs. */
export interface BatchInvokerOptions {
  readonly streamArn: string;
  /** Invoked as Lambda does, with a context naming the invocation. */
  readonly handler: (
    event: DynamoDBStreamEvent,
    context: InvocationContext,
  ) => Promise<DynamoDBBatchResponse>;
  readonly functionArn: string;
  /** @default 10 */
  readonly retryAttempts?: number;
  /** The on-failure destination: takes a discarded batch's invocation record. */
  readonly onFailure: (record: StreamFailureRecord) => Promise<void>;
  /** Where a failed read or an unkept batch is told. */
  readonly logger: Logger;
}

/** The pause before a batch's retry: doubling from 100 ms to 5 s (AWS does not say its own). */
const retryPause = (attempt: number) => Math.min(100 * 2 ** attempt, 5_000);

/**
 * Invokes the handler with a shard's batch as Lambda does, retrying and discarding; `signal`
 * (the mapping stopping) ends the retries.
 */
export function batchInvoker(options: BatchInvokerOptions) {
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

/** Waits, or less when `signal` aborts (then without an error). */
export async function sleep(milliseconds: number, signal: AbortSignal): Promise<void> {
  await wait(milliseconds, undefined, { signal }).catch(() => undefined);
}
