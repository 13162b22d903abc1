/**
 * Queueing plant events: a delivery per event and subscriber of its type, each subscriber's
 * bundled, and every event kept in the webhook log, for the fan-out's records and the replay's.
 */
import { itemsNotPlantsLog } from '../plants/stored-plant.ts';
import type { Logger } from '../platform/logger.ts';
import { inSpan } from '../platform/spans.ts';
import { type DeliveryMessage, firstDeliveryMessage } from './delivery-message.ts';
import { type DeliveryQueue, MessagesNotQueuedError, unsentOf } from './delivery-queue.ts';
import {
  type PlantEvent,
  type PlantEventType,
  plantEventTypes,
  type Subscription,
  webhookFor,
} from './plant-events.ts';
import { type PlantStreamRecord, plantEventOf } from './stream-records.ts';

/** Who hears of events: the stage's subscribers and the enabled endpoints, read once a batch. */
export interface SubscriptionSource {
  current(): Promise<readonly Subscription[]>;
}

/** A source that is always the same subscriptions (the stage configuration's). */
export function fixedSubscriptions(subscriptions: readonly Subscription[]): SubscriptionSource {
  return { current: async () => subscriptions };
}

/** Where every event is kept 7 days, for the endpoints' recover; none without endpoints. */
export interface EventLog {
  keep(events: readonly PlantEvent[]): Promise<void>;
}

export interface FanoutDependencies {
  readonly deliveries: DeliveryQueue;
  readonly subscriptions: SubscriptionSource;
  readonly eventLog?: EventLog;
  readonly logger?: Logger;
  readonly now?: () => number;
}

/**
 * The fan-out's line, a batch that queued or skipped anything, and its PlantsCreated count; and
 * the line of an event the queue refuses, set aside (and alarmed on) so it holds back no other.
 */
export const fanoutLog = {
  queued: 'queued webhook deliveries',
  newPlantsField: 'newPlants',
  refused: 'a plant event was set aside: its webhooks are not queued',
  refusedField: 'refusedEvents',
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
  /** Whether it failed before any record was tried (the subscribers or the log unavailable). */
  readonly failedBeforeSending?: boolean;
}

/**
 * Queues every event of `records`, a delivery per subscriber of its type; stops at the first record
 * SQS cannot take now, sets aside one it refuses for good and items not plants; logs one line.
 */
export async function queuePlantEventDeliveries(
  records: readonly PlantStreamRecord[],
  dependencies: FanoutDependencies,
  logger: Logger,
): Promise<QueueOutcome> {
  const now = dependencies.now ?? Date.now;
  const zeros = plantEventTypes.map((type) => [type, 0]);
  const events = Object.fromEntries(zeros) as Record<PlantEventType, number>;
  let skipped = 0;
  const read: { record: PlantStreamRecord; event: PlantEvent }[] = [];
  for (const record of records) {
    try {
      const event = plantEventOf(record, now());
      if (event !== undefined) read.push({ record, event });
    } catch (error) {
      skipped += 1;
      // Written by another tool: never sent, and never in the way of the plants after it.
      logger.warn(itemsNotPlantsLog.message, {
        [itemsNotPlantsLog.countField]: 1,
        eventID: record.eventID,
        error,
      });
    }
  }
  let subscriptions: readonly Subscription[];
  try {
    subscriptions = await dependencies.subscriptions.current();
    if (dependencies.eventLog !== undefined && read.length > 0) {
      await dependencies.eventLog.keep(read.map((entry) => entry.event));
    }
  } catch (error) {
    logger.error('could not read the subscribers or keep the events', { error });
    const failedRecord = read[0]?.record ?? records[0];
    return logQueued(logger, { events, skipped, failedRecord, failedBeforeSending: true });
  }
  const queued = read.map(({ record, event }) => ({
    record,
    event,
    messages: subscriptions.flatMap((subscription) => messageFor(event, subscription, now())),
  }));
  // The whole run at once, each subscriber's events bundled; what was not taken, record by record.
  const all = queued.flatMap((entry) => entry.messages);
  const unsent = new Set<DeliveryMessage>();
  await inSpan('deliveries send', { kind: 'producer' }, () =>
    dependencies.deliveries.send(all),
  ).catch((error: unknown) => {
    for (const message of unsentOf(error, all)) unsent.add(message);
  });
  for (const { record, event, messages } of queued) {
    try {
      const left = messages.filter((message) => unsent.has(message));
      if (left.length > 0) await dependencies.deliveries.send(left);
    } catch (error) {
      if (error instanceof MessagesNotQueuedError && error.refused) {
        // Kept in the webhook log for the endpoints' recover; the alarm names it to on-call.
        logger.error(fanoutLog.refused, {
          [fanoutLog.refusedField]: 1,
          webhookId: event.webhookId,
          eventID: record.eventID,
          error,
        });
        continue;
      }
      logger.error('could not queue webhook deliveries', { webhookId: event.webhookId, error });
      return logQueued(logger, { events, skipped, failedRecord: record });
    }
    events[event.type] += 1;
  }
  return logQueued(logger, { events, skipped });
}

/** The first attempt's message of `event` for one subscription, when it hears of the type. */
function messageFor(event: PlantEvent, subscription: Subscription, now: number): DeliveryMessage[] {
  const webhook = webhookFor(event, subscription);
  if (webhook === undefined) return [];
  const { endpoint } = subscription;
  const address = endpoint === undefined ? undefined : { ...endpoint, type: event.type };
  return [firstDeliveryMessage(webhook, subscription.name, now, address)];
}

function logQueued(logger: Logger, outcome: QueueOutcome): QueueOutcome {
  const counts = Object.entries(outcome.events).filter(([, count]) => count > 0);
  if (counts.length > 0 || outcome.skipped > 0) {
    const fields = counts.map(([type, count]) => [countFields[type as PlantEventType], count]);
    logger.info(fanoutLog.queued, { ...Object.fromEntries(fields), skipped: outcome.skipped });
  }
  return outcome;
}
