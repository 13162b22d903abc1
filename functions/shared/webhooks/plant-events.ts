/**
 * Plant events from the table's stream (docs/decisions/events-from-the-stream.md) and who hears
 * of them. Each carries the plant's version (a delete's one more), so receivers drop old ones.
 */
import {
  type PlantEventType,
  plantEventTypes,
  type WebhookFormat,
  webhookFormats,
} from '../event-types.ts';
import { type StoredPlant, stringifyStoredPlant } from '../plants/stored-plant.ts';

export { type PlantEventType, plantEventTypes, type WebhookFormat, webhookFormats };

export interface Subscription {
  readonly name: string;
  readonly events: readonly PlantEventType[];
  readonly format: WebhookFormat;
  /** A webhook endpoint's id and owner; absent for the stage configuration's subscribers. */
  readonly endpoint?: { readonly id: string; readonly owner: string };
}

/** The stream's event name behind each event type. */
export const streamEventNames: Readonly<Record<PlantEventType, 'INSERT' | 'MODIFY' | 'REMOVE'>> = {
  'plant.created': 'INSERT',
  'plant.updated': 'MODIFY',
  'plant.deleted': 'REMOVE',
};

/** The record kinds the fan-out's filter lets in: INSERT always (the PlantsCreated metric). */
export function streamRecordKinds(subscriptions: readonly Subscription[]): string[] {
  const types = new Set<PlantEventType>(['plant.created']);
  for (const subscription of subscriptions) for (const type of subscription.events) types.add(type);
  return [...types].map((type) => streamEventNames[type]);
}

/**
 * A subscription from its settings (`format` `plant` by default, `events` then `plant.created`;
 * every type for `event`). @throws Error naming the subscriber and what is wrong
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
  const unique = [...new Set(events)] as PlantEventType[];
  return { name, events: unique, format: format as WebhookFormat };
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
  /** The span of the request that made the change (`trace-context.ts`); absent when untraced. */
  readonly traceparent?: string;
}

export interface Webhook {
  readonly webhookId: string;
  readonly payload: string;
  /** Sent as the `plant-version` header; absent in messages queued before versions existed. */
  readonly version?: number;
  /** The event's request span: each attempt is sent as a `traceparent` below it. */
  readonly traceparent?: string;
}

/**
 * An event's `webhook-id`, the same on every retry, with the plant's version in it: Standard
 * Webhooks signs only the id, the timestamp and the body, and the `plant` body has no version.
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
 * The webhook a subscription gets of an event, if it hears of its type: `plant`, the stored plant
 * exactly; `event`, `{type, timestamp, data}`, `data` with its `version` (`{id, version}` deleted).
 */
export function webhookFor(event: PlantEvent, subscription: Subscription): Webhook | undefined {
  if (!subscription.events.includes(event.type)) return undefined;
  const { webhookId, version, traceparent } = event;
  if (subscription.format === 'plant') {
    const payload = stringifyStoredPlant(event.plant as StoredPlant);
    return { webhookId, version, traceparent, payload };
  }
  const plant =
    event.plant === undefined
      ? `{"id":${event.id}`
      : stringifyStoredPlant(event.plant).slice(0, -1);
  const data = `${plant},"version":${version}}`;
  const timestamp = JSON.stringify(new Date(event.occurredAt).toISOString());
  const payload = `{"type":${JSON.stringify(event.type)},"timestamp":${timestamp},"data":${data}}`;
  return { webhookId, version, traceparent, payload };
}
