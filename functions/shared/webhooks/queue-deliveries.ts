/**
 * Queueing plant events for delivery: one message per event and subscriber of its type on the
 * delivery queue, written in the subscriber's format. The webhook fan-out does it for the
 * stream's records, the stream-failure replay for the records of a kept batch.
 */
import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { type EnvironmentReader, parseJson } from '../environment.ts';
import type { Logger } from '../logger.ts';
import { itemsNotPlantsLog } from '../stored-plant.ts';
import { type DeliveryMessage, firstDeliveryMessage } from './delivery-message.ts';
import {
  type PlantEvent,
  type PlantEventType,
  type PlantStreamRecord,
  plantEventOf,
  plantEventTypes,
  type Subscription,
  subscriptionOf,
  webhookFor,
} from './plant-events.ts';

export interface FanoutDependencies {
  readonly sqs: Pick<SQSClient, 'send'>;
  readonly deliveryQueueUrl: string;
  readonly subscriptions: readonly Subscription[];
  readonly logger?: Logger;
  readonly now?: () => number;
}

/** The fan-out's log lines and fields that metric filters read. */
export const fanoutLog = {
  /** One line per batch that queued or skipped anything. */
  queued: 'queued webhook deliveries',
  /** The number of new plants queued: the PlantsCreated metric. */
  newPlantsField: 'newPlants',
} as const;

/** The log line's count field of each event type. */
const countFields: Readonly<Record<PlantEventType, string>> = {
  'plant.created': fanoutLog.newPlantsField,
  'plant.updated': 'updatedPlants',
  'plant.deleted': 'deletedPlants',
};

/** What queueing a run of stream records came to. */
export interface QueueOutcome {
  /** Events read, by type (whether or not anyone hears of them). */
  readonly events: Readonly<Record<PlantEventType, number>>;
  readonly skipped: number;
  /** The first record whose deliveries could not all be queued; the later ones were not tried. */
  readonly failedRecord?: PlantStreamRecord;
}

/**
 * Queues every event of `records`, in order, one message per subscriber of its type; stops at the
 * first record SQS does not take. A record whose item is not a plant is skipped and logged at
 * warn: it must never hold up the plants after it. Logs one line of what it queued (the
 * PlantsCreated metric counts it), for the fan-out and for a replay alike.
 */
export async function queuePlantEventDeliveries(
  records: readonly PlantStreamRecord[],
  dependencies: FanoutDependencies,
  logger: Logger,
): Promise<QueueOutcome> {
  const now = dependencies.now ?? Date.now;
  const events = Object.fromEntries(plantEventTypes.map((type) => [type, 0])) as Record<
    PlantEventType,
    number
  >;
  let skipped = 0;
  for (const record of records) {
    let plantEvent: PlantEvent | undefined;
    try {
      plantEvent = plantEventOf(record, now());
    } catch (error) {
      skipped += 1;
      // Written by another tool: never sent, and never in the way of the plants after it.
      logger.warn(itemsNotPlantsLog.message, {
        [itemsNotPlantsLog.countField]: 1,
        eventID: record.eventID,
        error,
      });
      continue;
    }
    if (plantEvent === undefined) continue;
    const event = plantEvent;
    const messages = dependencies.subscriptions.flatMap((subscription) => {
      const webhook = webhookFor(event, subscription);
      return webhook === undefined ? [] : [firstDeliveryMessage(webhook, subscription.name, now())];
    });
    try {
      await sendAll(dependencies, messages);
    } catch (error) {
      logger.error('could not queue webhook deliveries', { webhookId: event.webhookId, error });
      return logQueued(logger, { events, skipped, failedRecord: record });
    }
    events[event.type] += 1;
  }
  return logQueued(logger, { events, skipped });
}

function logQueued(logger: Logger, outcome: QueueOutcome): QueueOutcome {
  const counts = Object.entries(outcome.events).filter(([, count]) => count > 0);
  if (counts.length > 0 || outcome.skipped > 0) {
    logger.info(fanoutLog.queued, {
      ...Object.fromEntries(
        counts.map(([type, count]) => [countFields[type as PlantEventType], count]),
      ),
      skipped: outcome.skipped,
    });
  }
  return outcome;
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

/** The fan-out's settings, read with `read` (the replay reads them too); `read.check()` after. */
export function readFanoutSettings(read: EnvironmentReader) {
  return {
    deliveryQueueUrl: read.string('DELIVERY_QUEUE_URL'),
    subscriptions: read.parse('SUBSCRIPTIONS', parseSubscriptions),
  };
}

/** `SUBSCRIPTIONS`: a JSON array of `{name, events?, format?}`, each checked. */
function parseSubscriptions(text: string): Subscription[] {
  const value = parseJson(isSubscriptionList, 'a JSON array of {name, events, format}')(text);
  return value.map((entry) => subscriptionOf(entry.name, entry));
}

function isSubscriptionList(
  value: unknown,
): value is { name: string; events?: string[]; format?: string }[] {
  return (
    Array.isArray(value) &&
    value.every(
      (entry) =>
        typeof entry?.name === 'string' &&
        (entry.events === undefined ||
          (Array.isArray(entry.events) &&
            entry.events.every((type: unknown) => typeof type === 'string'))) &&
        (entry.format === undefined || typeof entry.format === 'string'),
    )
  );
}
