/**
 * The deployed delivery's unit of work: one event for one subscriber, as the message the fan-out
 * function puts on the delivery queue. The message says which attempt it is for and when that
 * attempt is due, so a retry waits as a delayed message (never an in-flight one) and its attempt
 * number does not depend on how often SQS handed it out.
 */
import { randomUUID } from 'node:crypto';
import * as v from 'valibot';
import type { Webhook } from './plant-events.ts';

export interface DeliveryMessage extends Webhook {
  /** The subscriber's name in the stage configuration, or `endpoint:<id>` for an endpoint. */
  readonly subscriber: string;
  /** For a webhook endpoint: which, whose, and the event's type (its attempts show it). */
  readonly endpoint?: EndpointAddress;
  /**
   * For a webhook endpoint: this delivery's id, which claims the event at the endpoint before
   * each attempt, so that no other delivery of the event is under way there at once.
   */
  readonly deliveryId?: string;
  /** The attempt this message is for, from 1. */
  readonly attempt: number;
  /** When that attempt is due, in milliseconds since the epoch. */
  readonly dueAt: number;
  /** When the event was first queued, in milliseconds since the epoch (how late it is). */
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
 * The first attempt's message of a webhook for a subscriber, due at once; an endpoint's is a new
 * delivery of its own (`deliveryId`) unless one is given.
 */
export function firstDeliveryMessage(
  event: Webhook,
  subscriber: string,
  now: number,
  endpoint?: EndpointAddress,
  deliveryId: string | undefined = endpoint === undefined ? undefined : randomUUID(),
): DeliveryMessage {
  return {
    ...event,
    subscriber,
    endpoint,
    deliveryId,
    attempt: 1,
    dueAt: now,
    queuedAt: now,
  };
}

/** A member read when it is what `schema` says, left out (`undefined`) when it is anything else. */
function tolerated<Schema extends v.GenericSchema>(schema: Schema) {
  return v.fallback(v.optional(schema), undefined);
}

const finite = v.pipe(v.number(), v.finite());

/**
 * A queue body as the delivery reads it: the members it needs must be there and be what they
 * say; the attempt, its due time and when it was queued are taken when they are numbers.
 */
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
  lastFailure: tolerated(v.string()),
});

/**
 * The message of a queue body, or `undefined` when the body is not one (never delivered). A
 * dead letter the delivery wrote (it has a `lastFailure`) redriven to the queue starts the
 * schedule again: a first attempt, due at once; so does a body without an attempt (written
 * before attempts were carried). A message SQS moved to the dead letters itself resumes.
 */
export function parseDeliveryMessage(body: string, now: number): DeliveryMessage | undefined {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return undefined;
  }
  const parsed = v.safeParse(deliveryMessageSchema, json);
  if (!parsed.success) return undefined;
  const { webhookId, payload, subscriber, version, endpoint, deliveryId, lastFailure } =
    parsed.output;
  const redriven = lastFailure !== undefined;
  const timing = (value: number | undefined) => (redriven ? undefined : value);
  return {
    webhookId,
    payload,
    version,
    subscriber,
    endpoint,
    deliveryId,
    attempt: Math.max(1, Math.trunc(timing(parsed.output.attempt) ?? 1)),
    dueAt: timing(parsed.output.dueAt) ?? now,
    queuedAt: timing(parsed.output.queuedAt) ?? now,
  };
}
