/**
 * The deployed delivery's unit of work: one event for one subscriber, as the message the fan-out
 * function puts on the delivery queue (and, with its last failure, on the dead-letter queue).
 */
import type { NewPlantEvent } from './new-plant-events.ts';

export interface DeliveryMessage extends NewPlantEvent {
  /** The subscriber's name in the stage configuration. */
  readonly subscriber: string;
}

/** A delivery whose every attempt failed, as the dead-letter queue keeps it. */
export interface DeadLetterMessage extends DeliveryMessage {
  readonly attempts: number;
  readonly lastFailure: string;
  readonly failedAt: string;
}

/** The message of a queue body, or `undefined` when the body is not one (never delivered). */
export function parseDeliveryMessage(body: string): DeliveryMessage | undefined {
  try {
    const value = JSON.parse(body) as Partial<DeliveryMessage>;
    const { webhookId, payload, subscriber } = value;
    if (typeof webhookId !== 'string' || typeof payload !== 'string') return undefined;
    if (typeof subscriber !== 'string') return undefined;
    return { webhookId, payload, subscriber };
  } catch {
    return undefined;
  }
}
