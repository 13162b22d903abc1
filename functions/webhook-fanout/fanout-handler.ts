/**
 * The webhook fan-out: reads the plants table's stream (INSERTs only, filtered
 * by the event source mapping) and puts one message per new plant and subscriber on the delivery
 * queue. It never calls a subscriber, so no subscriber can hold up the stream.
 *
 * A record whose messages could not all be sent is reported as a batch item failure, so Lambda
 * retries from it (a retry may send some messages twice: deliveries are at least once, and a
 * subscriber tells a repeat by its `webhook-id`).
 */
import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { createLogger } from '../shared/logger.ts';
import type { DeliveryMessage } from '../webhooks/delivery-message.ts';
import { newPlantEventOf, type PlantStreamRecord } from '../webhooks/new-plant-events.ts';

export interface FanoutDependencies {
  readonly sqs: Pick<SQSClient, 'send'>;
  readonly deliveryQueueUrl: string;
  readonly subscriberNames: readonly string[];
}

/** Builds the handler around its dependencies (tests bring their own). */
export function createFanoutHandler(dependencies: FanoutDependencies) {
  const logger = createLogger({ service: 'webhook-fanout' });
  return async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
    const batchItemFailures: { itemIdentifier: string }[] = [];
    let newPlants = 0;
    for (const record of event.Records) {
      const plantEvent = newPlantEventOf(record as PlantStreamRecord);
      if (plantEvent === undefined) continue;
      const messages: DeliveryMessage[] = dependencies.subscriberNames.map((subscriber) => ({
        ...plantEvent,
        subscriber,
      }));
      try {
        await sendAll(dependencies, messages);
      } catch (error) {
        logger.error('could not queue webhook deliveries', {
          webhookId: plantEvent.webhookId,
          error,
        });
        // Lambda retries from the first failed record, the later ones with it.
        batchItemFailures.push({ itemIdentifier: record.dynamodb?.SequenceNumber ?? '' });
        break;
      }
      newPlants += 1;
    }
    // One line per batch; the PlantsCreated metric is counted from it.
    if (newPlants > 0) logger.info('queued webhook deliveries', { newPlants });
    return { batchItemFailures };
  };
}

/** Sends the messages ten at a time (SQS's batch limit); throws if any is not accepted. */
async function sendAll(dependencies: FanoutDependencies, messages: readonly DeliveryMessage[]) {
  for (let start = 0; start < messages.length; start += 10) {
    const batch = messages.slice(start, start + 10);
    const { Failed = [] } = await dependencies.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: dependencies.deliveryQueueUrl,
        Entries: batch.map((message, index) => ({
          Id: String(index),
          MessageBody: JSON.stringify(message),
        })),
      }),
    );
    if (Failed.length > 0) throw new Error(`SQS refused ${Failed.length} delivery messages`);
  }
}

/** The configuration from the environment; anything missing fails the cold start. */
export function readFanoutConfig(environment: NodeJS.ProcessEnv) {
  const deliveryQueueUrl = environment.DELIVERY_QUEUE_URL;
  const names: unknown = JSON.parse(environment.SUBSCRIBER_NAMES ?? 'null');
  if (
    !deliveryQueueUrl ||
    !Array.isArray(names) ||
    names.some((name) => typeof name !== 'string')
  ) {
    throw new Error(
      'webhook-fanout: DELIVERY_QUEUE_URL and SUBSCRIBER_NAMES (a JSON array of names) are required',
    );
  }
  return { deliveryQueueUrl, subscriberNames: names as string[] };
}
