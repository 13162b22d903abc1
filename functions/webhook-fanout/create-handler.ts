/**
 * The webhook fan-out: reads the plants table's stream (the event source mapping passes only the
 * record kinds some subscriber hears of) and puts one message per event and subscriber of its type
 * on the delivery queue, written in the subscriber's format. It never calls a subscriber, so no
 * subscriber can hold up the stream.
 *
 * A record whose messages could not all be sent is reported as a batch item failure, so Lambda
 * retries from it (a retry may send some messages twice: deliveries are at least once, and a
 * subscriber tells a repeat by its `webhook-id`). A batch still failing after Lambda's retries
 * is kept whole in the stream-failures bucket, and `replay-stream-failures` queues it later.
 */
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import {
  createLogger,
  type InvocationContext,
  invocationLoggers,
} from '../shared/platform/logger.ts';
import {
  type FanoutDependencies,
  queuePlantEventDeliveries,
} from '../shared/webhooks/queue-deliveries.ts';
import type { PlantStreamRecord } from '../shared/webhooks/stream-records.ts';

export function createHandler(dependencies: FanoutDependencies) {
  const loggerOf = invocationLoggers(
    dependencies.logger ?? createLogger({ service: 'webhook-fanout' }),
  );
  return async (
    event: DynamoDBStreamEvent,
    context?: InvocationContext,
  ): Promise<DynamoDBBatchResponse> => {
    const { failedRecord } = await queuePlantEventDeliveries(
      event.Records as PlantStreamRecord[],
      dependencies,
      loggerOf(context),
    );
    // Lambda retries from the first failed record, the later ones with it.
    const sequenceNumber = failedRecord?.dynamodb?.SequenceNumber;
    return {
      batchItemFailures:
        failedRecord === undefined ? [] : [{ itemIdentifier: sequenceNumber ?? '' }],
    };
  };
}
