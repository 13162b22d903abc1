/**
 * Lambda's event source mappings, imitated for the test bed as AWS documents them, so the
 * deployed webhook functions run unchanged against real emulated queues and a real stream:
 *
 * - SQS ("Using Lambda with Amazon SQS"): long-polls batches of up to `batchSize` with their
 *   system attributes; with `ReportBatchItemFailures`, deletes every message of the batch but
 *   those the function names as failures; a thrown error fails the whole batch; a failed message
 *   stays on the queue and comes back after the visibility timeout (and to the queue's
 *   dead-letter queue after `maxReceiveCount` receives, which the queue itself enforces).
 * - DynamoDB streams ("Using Lambda with DynamoDB", "Retaining discarded records"): reads each
 *   shard in order, keeps only records matching the filter, invokes with up to `batchSize`; a
 *   batch item failure retries from that record (the lowest failed sequence number is the
 *   checkpoint), up to `retryAttempts` retries; then the rest of the batch is discarded to the
 *   on-failure destination: here an S3 bucket, given the invocation record with its payload.
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
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import {
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type {
  DynamoDBBatchResponse,
  DynamoDBStreamEvent,
  SQSBatchResponse,
  SQSEvent,
} from 'aws-lambda';
import type { InvocationContext, Logger } from '../../functions/shared/platform/logger.ts';

/** A running mapping; `stop` waits for the batch in hand to finish. */
export interface RunningMapping {
  /** Invocations so far, and the largest number of messages any one of them held. */
  readonly invocations: () => number;
  stop(): Promise<void>;
}

export interface SqsMappingOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly region: string;
  /** Invoked as Lambda does, with a context naming the invocation. */
  readonly handler: (event: SQSEvent, context: InvocationContext) => Promise<SQSBatchResponse>;
  /** @default 10 */
  readonly batchSize?: number;
  /** Pollers side by side, as Lambda scales them out. @default 2 */
  readonly concurrency?: number;
  /**
   * Where a poller's failed call is told (a receive or delete that failed after the SDK's
   * retries: the messages it held come back after the visibility timeout). The poller goes on,
   * as Lambda's does. @default nowhere
   */
  readonly logger?: Logger;
}

/** Polls the queue and invokes the handler, as Lambda's SQS event source mapping does. */
export function startSqsMapping(options: SqsMappingOptions): RunningMapping {
  const stopping = new AbortController();
  let invocations = 0;
  const poll = async () => {
    while (!stopping.signal.aborted) {
      let messages: Message[] | undefined;
      let attempts = 1;
      try {
        ({
          Messages: messages,
          $metadata: { attempts = 1 },
        } = await options.sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: options.queueUrl,
            MaxNumberOfMessages: options.batchSize ?? 10,
            // Lambda long-polls (up to 20 s); 5 s keeps a stopping test quick.
            WaitTimeSeconds: 5,
            MessageSystemAttributeNames: ['All'],
          }),
          { abortSignal: stopping.signal },
        ));
      } catch (error) {
        if (stopping.signal.aborted) return;
        options.logger?.error('could not receive from the queue', { error });
        await wait(1_000, undefined, { signal: stopping.signal }).catch(() => undefined);
        continue;
      }
      // An attempt that failed may have been handed messages nobody got: they wait out the
      // visibility timeout. Said, so that a late message explains itself.
      if (attempts > 1) options.logger?.warn('a receive needed retries', { attempts });
      if (messages === undefined || messages.length === 0) continue;
      const event: SQSEvent = {
        Records: messages.map((message) => ({
          messageId: message.MessageId ?? '',
          receiptHandle: message.ReceiptHandle ?? '',
          body: message.Body ?? '',
          attributes: message.Attributes as never,
          messageAttributes: {},
          md5OfBody: message.MD5OfBody ?? '',
          eventSource: 'aws:sqs',
          eventSourceARN: options.queueArn,
          awsRegion: options.region,
        })),
      };
      invocations += 1;
      let failed: Set<string>;
      try {
        const response = await options.handler(event, { awsRequestId: randomUUID() });
        failed = new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
        // An empty or unknown identifier fails the whole batch.
        const ids = new Set(event.Records.map((record) => record.messageId));
        if ([...failed].some((id) => !ids.has(id))) failed = ids;
      } catch {
        failed = new Set(event.Records.map((record) => record.messageId));
      }
      const done = messages.filter((message) => !failed.has(message.MessageId ?? ''));
      if (done.length > 0) await deleteMessages(done);
    }
  };
  /** Deletes what the function handled; a message SQS did not delete comes back later. */
  const deleteMessages = async (done: readonly Message[]) => {
    try {
      const { Failed = [] } = await options.sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: options.queueUrl,
          Entries: done.map((message, index) => ({
            Id: String(index),
            ReceiptHandle: message.ReceiptHandle,
          })),
        }),
      );
      if (Failed.length > 0) {
        options.logger?.error('could not delete handled messages', { failed: Failed.length });
      }
    } catch (error) {
      if (!stopping.signal.aborted) {
        options.logger?.error('could not delete handled messages', { error });
      }
    }
  };
  const pollers = Array.from({ length: options.concurrency ?? 2 }, poll);
  return {
    invocations: () => invocations,
    stop: async () => {
      stopping.abort();
      await Promise.all(pollers);
    },
  };
}

export interface StreamMappingOptions {
  readonly streams: DynamoDBStreamsClient;
  readonly streamArn: string;
  /** Invoked as Lambda does, with a context naming the invocation. */
  readonly handler: (
    event: DynamoDBStreamEvent,
    context: InvocationContext,
  ) => Promise<DynamoDBBatchResponse>;
  /** The event filter: only records with these event names. @default ['INSERT'] */
  readonly eventNames?: readonly string[];
  /** @default 100 */
  readonly batchSize?: number;
  /** @default 10 */
  readonly retryAttempts?: number;
  /** The on-failure destination: the bucket that keeps discarded batches whole. */
  readonly onFailure: { readonly s3: S3Client; readonly bucket: string };
}

/**
 * Reads the stream from its start (TRIM_HORIZON) and invokes the handler, as Lambda's DynamoDB
 * event source mapping does with a partial batch response and an S3 on-failure destination.
 */
export async function startStreamMapping(options: StreamMappingOptions): Promise<RunningMapping> {
  const stopping = new AbortController();
  const mappingId = randomUUID();
  const eventNames = options.eventNames ?? ['INSERT'];
  let invocations = 0;
  const send = { abortSignal: stopping.signal };

  /** Invokes with `records`, retrying from a failed record; discards what still fails. */
  const deliver = async (shardId: string, records: _Record[]) => {
    let pending = records;
    for (let attempt = 0; pending.length > 0; attempt += 1) {
      invocations += 1;
      const event = { Records: pending } as unknown as DynamoDBStreamEvent;
      let failedAt: number;
      try {
        const { batchItemFailures } = await options.handler(event, { awsRequestId: randomUUID() });
        const failed = batchItemFailures.map((failure) => failure.itemIdentifier);
        failedAt =
          failed.length === 0
            ? -1
            : Math.min(
                ...failed.map((id) =>
                  pending.findIndex((record) => record.dynamodb?.SequenceNumber === id),
                ),
              );
      } catch {
        failedAt = 0;
      }
      if (failedAt === -1) return;
      pending = pending.slice(Math.max(failedAt, 0));
      if (attempt >= (options.retryAttempts ?? 10)) {
        await keep(shardId, pending, attempt + 1);
        return;
      }
    }
  };

  /** The invocation record Lambda writes to an S3 on-failure destination, payload included. */
  const keep = async (shardId: string, records: _Record[], invokeCount: number) => {
    const now = new Date();
    const record = {
      requestContext: {
        requestId: randomUUID(),
        functionArn: 'arn:aws:lambda:us-east-1:123456789012:function:webhook-fanout',
        condition: 'RetryAttemptsExhausted',
        approximateInvokeCount: invokeCount,
      },
      responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
      version: '1.0',
      timestamp: now.toISOString(),
      DDBStreamBatchInfo: {
        shardId,
        startSequenceNumber: records[0]?.dynamodb?.SequenceNumber,
        endSequenceNumber: records.at(-1)?.dynamodb?.SequenceNumber,
        batchSize: records.length,
        streamArn: options.streamArn,
      },
      payload: JSON.stringify({ Records: records }),
    };
    const date = now.toISOString().slice(0, 10).replaceAll('-', '/');
    const stamp = now.toISOString().slice(0, 19).replaceAll(':', '.');
    await options.onFailure.s3.send(
      new PutObjectCommand({
        Bucket: options.onFailure.bucket,
        Key: `aws/lambda/${mappingId}/${shardId}/${date}/${stamp}-${randomUUID()}`,
        Body: JSON.stringify(record),
      }),
    );
  };

  const { StreamDescription } = await options.streams.send(
    new DescribeStreamCommand({ StreamArn: options.streamArn }),
  );
  /** Each shard's iterator, and the last sequence number read from it. */
  const shards = new Map<string, { iterator: string | undefined; after?: string }>();
  const iteratorOf = async (shardId: string, after: string | undefined) => {
    const { ShardIterator } = await options.streams.send(
      new GetShardIteratorCommand({
        StreamArn: options.streamArn,
        ShardId: shardId,
        ...(after === undefined
          ? { ShardIteratorType: 'TRIM_HORIZON' as const }
          : { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER' as const, SequenceNumber: after }),
      }),
    );
    return ShardIterator;
  };
  for (const shard of StreamDescription?.Shards ?? []) {
    const shardId = shard.ShardId ?? '';
    shards.set(shardId, { iterator: await iteratorOf(shardId, undefined) });
  }
  /**
   * A shard's next records. DynamoDB Local fails an iterator's read once another table has been
   * written since it was made (TrimmedDataAccessException), as AWS does an expired iterator's:
   * Lambda's poller makes it again after the last record read, and so does this.
   */
  const getRecords = async (
    shardId: string,
    shard: { iterator: string | undefined; after?: string },
  ) => {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await options.streams.send(
          new GetRecordsCommand({ ShardIterator: shard.iterator, Limit: options.batchSize ?? 100 }),
          send,
        );
      } catch (error) {
        const name = (error as { name?: unknown }).name;
        const stale = name === 'TrimmedDataAccessException' || name === 'ExpiredIteratorException';
        if (!stale || attempt === 3) throw error;
        shard.iterator = await iteratorOf(shardId, shard.after);
      }
    }
  };
  const polling = (async () => {
    while (!stopping.signal.aborted) {
      let read = 0;
      try {
        for (const [shardId, shard] of shards) {
          if (shard.iterator === undefined) continue;
          const { Records = [], NextShardIterator } = await getRecords(shardId, shard);
          shard.iterator = NextShardIterator;
          shard.after = Records.at(-1)?.dynamodb?.SequenceNumber ?? shard.after;
          read += Records.length;
          const matching = Records.filter((record) => eventNames.includes(record.eventName ?? ''));
          if (matching.length > 0) await deliver(shardId, matching);
        }
      } catch (error) {
        if (stopping.signal.aborted) return;
        throw error;
      }
      if (read === 0)
        await wait(100, undefined, { signal: stopping.signal }).catch(() => undefined);
    }
  })();
  return {
    invocations: () => invocations,
    stop: async () => {
      stopping.abort();
      await polling;
    },
  };
}
