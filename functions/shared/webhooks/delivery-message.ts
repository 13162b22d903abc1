/**
 * One event for one subscriber, as the delivery queue carries it: which attempt and when it is
 * due, so a retry waits as a delayed message and its number does not depend on SQS's receipts.
 */
import { randomUUID } from 'node:crypto';
import * as v from 'valibot';
import { parseTraceparent } from '../platform/trace-context.ts';
import type { Webhook } from './plant-events.ts';

export interface DeliveryMessage extends Webhook {
  /** The stage subscriber's name, or `endpoint:<id>`. */
  readonly subscriber: string;
  readonly endpoint?: EndpointAddress;
  /** An endpoint delivery's id, which claims the event before each attempt (one at a time). */
  readonly deliveryId?: string;
  /** From 1. */
  readonly attempt: number;
  /** When this attempt is due, in milliseconds since the epoch. */
  readonly dueAt: number;
  /** How often in a row this attempt was put off, its store not answering (none: absent). */
  readonly putOffs?: number;
  /** A first attempt moved to the retry queue, its endpoint failing; never moved again. */
  readonly sidelined?: true;
  /** When the event was first queued, in milliseconds since the epoch. */
  readonly queuedAt: number;
}

/** The webhook endpoint a message is for, and the type of its event. */
export interface EndpointAddress {
  readonly id: string;
  readonly owner: string;
  readonly type: string;
}

/** A delivery whose every attempt failed, as the dead-letter queue keeps it. */
export interface DeadLetterMessage extends DeliveryMessage {
  readonly attempts: number;
  readonly lastFailure: string;
  readonly failedAt: string;
}

/**
 * A message's body as SQS takes it: JSON, with U+FFFE and U+FFFF escaped (SQS allows only XML's
 * characters, "Amazon SQS message quotas"; `JSON.stringify` escapes the other ones it refuses).
 */
export function deliveryMessageBody(message: DeliveryMessage): string {
  return JSON.stringify(message).replace(
    /[\uFFFE\uFFFF]/g,
    (character) => `\\u${character.charCodeAt(0).toString(16)}`,
  );
}

/**
 * One subscriber's deliveries in one queue message, so a stream batch to 2,000 endpoints is a few
 * thousand messages, not one per event and endpoint (docs/capacity.md): at most ten, all
 * attempted side by side, and 24 KiB, so that ten fill a SendMessageBatch within SQS's 256 KiB.
 */
export const bundleLimits = { messages: 10, bodyBytes: 24 * 1024 } as const;

/** The body of one subscriber's deliveries: a message's own, or a bundle of them. */
export function deliveryMessagesBody(
  messages: readonly DeliveryMessage[],
  bodyOf: (message: DeliveryMessage) => string = deliveryMessageBody,
): string {
  const bodies = messages.map(bodyOf);
  return bodies.length === 1 ? (bodies[0] as string) : `{"deliveries":[${bodies.join(',')}]}`;
}

/** The first attempt's message, due at once; an endpoint's is a new delivery unless given one. */
export function firstDeliveryMessage(
  event: Webhook,
  subscriber: string,
  now: number,
  endpoint?: EndpointAddress,
  deliveryId: string | undefined = endpoint === undefined ? undefined : randomUUID(),
): DeliveryMessage {
  return { ...event, subscriber, endpoint, deliveryId, attempt: 1, dueAt: now, queuedAt: now };
}

/** A member read when it is what `schema` says, left out when it is anything else. */
function tolerated<Schema extends v.GenericSchema>(schema: Schema) {
  return v.fallback(v.optional(schema), undefined);
}

const finite = v.pipe(v.number(), v.finite());
const isTraceparent = (text: string) => parseTraceparent(text) !== undefined;

/** A queue body: what the delivery needs must be there; the timing is taken when it is numbers. */
const deliveryMessageSchema = v.object({
  webhookId: v.string(),
  payload: v.string(),
  subscriber: v.string(),
  version: tolerated(v.pipe(v.number(), v.safeInteger())),
  endpoint: tolerated(v.object({ id: v.string(), owner: v.string(), type: v.string() })),
  deliveryId: tolerated(v.string()),
  attempt: tolerated(finite),
  dueAt: tolerated(finite),
  queuedAt: tolerated(finite),
  putOffs: tolerated(v.pipe(v.number(), v.safeInteger(), v.minValue(1))),
  sidelined: tolerated(v.literal(true)),
  lastFailure: tolerated(v.string()),
  traceparent: tolerated(v.pipe(v.string(), v.check(isTraceparent))),
});

/**
 * The deliveries of a queue body: its one message, or each of a bundle's (`{"deliveries": […]}`).
 * What is no message is given back as its text (never delivered). A redriven dead letter (with
 * `lastFailure`) or a body without an attempt starts the schedule again.
 */
export function parseDeliveryMessages(body: string, now: number): (DeliveryMessage | string)[] {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return [body];
  }
  const members = bundleMembers(json);
  if (members === undefined) return [messageOf(json, now) ?? body];
  return members.map((member) => messageOf(member, now) ?? JSON.stringify(member));
}

/** A bundle's members (`{"deliveries": […]}`), or `undefined` when `json` is no bundle. */
export function bundleMembers(json: unknown): unknown[] | undefined {
  const members = (json as { deliveries?: unknown } | null)?.deliveries;
  return Array.isArray(members) ? members : undefined;
}

function messageOf(json: unknown, now: number): DeliveryMessage | undefined {
  const parsed = v.safeParse(deliveryMessageSchema, json);
  if (!parsed.success) return undefined;
  const {
    webhookId,
    payload,
    subscriber,
    version,
    endpoint,
    deliveryId,
    lastFailure,
    traceparent,
  } = parsed.output;
  const redriven = lastFailure !== undefined;
  const timing = (value: number | undefined) => (redriven ? undefined : value);
  return {
    webhookId,
    payload,
    version,
    subscriber,
    endpoint,
    deliveryId,
    traceparent,
    attempt: Math.max(1, Math.trunc(timing(parsed.output.attempt) ?? 1)),
    dueAt: timing(parsed.output.dueAt) ?? now,
    queuedAt: timing(parsed.output.queuedAt) ?? now,
    putOffs: timing(parsed.output.putOffs),
    ...(parsed.output.sidelined === true && !redriven ? { sidelined: true as const } : {}),
  };
}
