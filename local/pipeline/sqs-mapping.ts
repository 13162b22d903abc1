/**
 * Lambda's SQS event source mapping, imitated as AWS documents it ("Using Lambda with Amazon
 * SQS"), so the deployed delivery handler runs unchanged on SQS (moto's) or the in-process queues
 * of `npm start`: pollers long-poll batches of up to `batchSize` with their system attributes;
 * with `ReportBatchItemFailures`, every message of the batch is deleted but those the function
 * names as failures; a thrown error fails the whole batch; a failed message stays on the queue and
 * comes back after the visibility timeout (and goes to the queue's dead-letter queue after
 * `maxReceiveCount` receives, which the queue itself enforces).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as wait } from 'node:timers/promises';
import {
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { InvocationContext, Logger } from '../../functions/shared/platform/logger.ts';
import type { RunningMapping } from './stream-mapping.ts';

export interface SqsMappingOptions {
  readonly sqs: Pick<SQSClient, 'send'>;
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
            MessageAttributeNames: ['All'],
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
          messageAttributes: lambdaAttributes(message.MessageAttributes),
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
        // No list, or an empty one, is a success (Lambda reads only the failures named).
        const failures = response?.batchItemFailures ?? [];
        failed = new Set(failures.map((failure) => failure.itemIdentifier));
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

/** A message's attributes as Lambda's SQS event gives them (camel case, empty lists). */
function lambdaAttributes(attributes: Message['MessageAttributes']) {
  return Object.fromEntries(
    Object.entries(attributes ?? {}).map(([name, value]) => [
      name,
      {
        dataType: value.DataType ?? 'String',
        stringValue: value.StringValue,
        stringListValues: [],
        binaryListValues: [],
      },
    ]),
  );
}
