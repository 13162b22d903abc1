/**
 * Plant events, read from the plants table's stream (docs/decisions/events-from-the-stream.md),
 * and the subscriptions that hear of them: `plant.created` (an INSERT), `plant.updated` (a
 * MODIFY that changed the plant), `plant.deleted` (a REMOVE). Each carries the plant's version,
 * a delete's one more than the plant's last, so a receiver drops an event older than one it has.
 */
import { type StoredPlant, stringifyStoredPlant } from '../plants/stored-plant.ts';

import {
  type PlantEventType,
  plantEventTypes,
  type WebhookFormat,
  webhookFormats,
} from './event-types.ts';

export { type PlantEventType, plantEventTypes, type WebhookFormat, webhookFormats };

/** What a subscriber hears of, and how. */
export interface Subscription {
  readonly name: string;
  readonly events: readonly PlantEventType[];
  readonly format: WebhookFormat;
  /** A webhook endpoint's id and owner; absent for the stage configuration's subscribers. */
  readonly endpoint?: { readonly id: string; readonly owner: string };
}

/** The stream's event name behind each event type (the fan-out's filter is built from it). */
export const streamEventNames: Readonly<Record<PlantEventType, 'INSERT' | 'MODIFY' | 'REMOVE'>> = {
  'plant.created': 'INSERT',
  'plant.updated': 'MODIFY',
  'plant.deleted': 'REMOVE',
};

/**
 * The stream's record kinds the fan-out must see (its event source mapping's filter): INSERT
 * always (its line of new plants is the PlantsCreated metric), and those the subscribers hear of.
 */
export function streamRecordKinds(subscriptions: readonly Subscription[]): string[] {
  const types = new Set<PlantEventType>(['plant.created']);
  for (const subscription of subscriptions) for (const type of subscription.events) types.add(type);
  return [...types].map((type) => streamEventNames[type]);
}

/**
 * A subscription from its settings: `format` defaults to `plant`; `events` to `plant.created`
 * for the `plant` format and every type for `event`.
 * @throws Error naming the subscriber when a type or format is unknown, or the `plant` format
 * is asked for another type (its body cannot tell them apart).
 */
export function subscriptionOf(
  name: string,
  settings: { readonly events?: readonly string[]; readonly format?: string },
): Subscription {
  const format = settings.format ?? 'plant';
  if (!(webhookFormats as readonly string[]).includes(format)) {
    throw new Error(`Webhook subscriber ${name}: format must be plant or event, got "${format}".`);
  }
  const events = settings.events ?? (format === 'plant' ? ['plant.created'] : plantEventTypes);
  for (const type of events) {
    if (!(plantEventTypes as readonly string[]).includes(type)) {
      throw new Error(
        `Webhook subscriber ${name}: events must be among ${plantEventTypes.join(', ')}, got "${type}".`,
      );
    }
    if (format === 'plant' && type !== 'plant.created') {
      throw new Error(
        `Webhook subscriber ${name}: the plant format carries plant.created only; use the event format for ${type}.`,
      );
    }
  }
  if (events.length === 0) throw new Error(`Webhook subscriber ${name}: events is empty.`);
  return {
    name,
    events: [...new Set(events)] as PlantEventType[],
    format: format as WebhookFormat,
  };
}

/** One change of one plant. */
export interface PlantEvent {
  /** The Standard Webhooks `webhook-id`: unique per event, the same on every retry of it. */
  readonly webhookId: string;
  readonly type: PlantEventType;
  readonly id: bigint;
  /** The plant after the change; absent for a delete. */
  readonly plant?: StoredPlant;
  readonly version: number;
  /** When the change was made (the stream's approximate time), milliseconds since the epoch. */
  readonly occurredAt: number;
}

/** One webhook to send: its id, its exact body, and the version it is of. */
export interface Webhook {
  readonly webhookId: string;
  readonly payload: string;
  /** Sent as the `plant-version` header; absent in messages queued before versions existed. */
  readonly version?: number;
}

/**
 * An event's `webhook-id`: one per event (the stream record's id), the same on every retry, with
 * the plant's version in it. Standard Webhooks signs the id, the timestamp and the body, not the
 * other headers, so the version a receiver orders by must be in one of those: for the `plant`
 * format, whose body is the StoredPlant alone, it is here (`msg_<record>_v<version>`).
 */
export function webhookIdOf(eventId: string, version: number): string {
  return `msg_${eventId}_v${version}`;
}

/** The version a `webhook-id` carries, or `undefined` when it carries none. */
export function versionOfWebhookId(webhookId: string): number | undefined {
  const match = /_v(0|[1-9][0-9]{0,15})$/.exec(webhookId);
  return match === null ? undefined : Number(match[1]);
}

/**
 * The webhook `subscription` gets of `event`, or `undefined` when it does not hear of its type.
 * `plant`: the StoredPlant exactly (what the first subscribers were promised). `event`:
 * `{"type":…,"timestamp":…,"data":…}`, `data` the StoredPlant with its `version`, or `{id,
 * version}` for a delete.
 */
export function webhookFor(event: PlantEvent, subscription: Subscription): Webhook | undefined {
  if (!subscription.events.includes(event.type)) return undefined;
  const { webhookId, version } = event;
  if (subscription.format === 'plant') {
    return { webhookId, version, payload: stringifyStoredPlant(event.plant as StoredPlant) };
  }
  const plant =
    event.plant === undefined
      ? `{"id":${event.id}`
      : stringifyStoredPlant(event.plant).slice(0, -1);
  const data = `${plant},"version":${version}}`;
  const timestamp = JSON.stringify(new Date(event.occurredAt).toISOString());
  return {
    webhookId,
    version,
    payload: `{"type":${JSON.stringify(event.type)},"timestamp":${timestamp},"data":${data}}`,
  };
}
