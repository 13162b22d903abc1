/**
 * New-plant events, read from the plants table's stream: every INSERT is a plant that became
 * stored by a create. An idempotent repeat or a conflict writes nothing, so it has no record; a
 * re-create after a delete is a new INSERT, so a new event. Nothing else writes the table's
 * items, so the stream is the one source of the webhook: no second write that could be lost.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { storedPlantFromItem, stringifyStoredPlant } from '../shared/stored-plant.ts';

/** One new plant to tell every subscriber of. */
export interface NewPlantEvent {
  /** The Standard Webhooks `webhook-id`: unique per event, the same on every retry of it. */
  readonly webhookId: string;
  /** The StoredPlant JSON, exact id: the body POSTed to subscribers. */
  readonly payload: string;
}

/** A stream record as Lambda's DynamoDB event and the DynamoDB Streams API both carry it. */
export interface PlantStreamRecord {
  /** Unique per record in the stream. */
  readonly eventID?: string;
  readonly eventName?: string;
  readonly dynamodb?: {
    readonly NewImage?: Record<string, AttributeValue>;
    readonly SequenceNumber?: string;
  };
}

/**
 * The new-plant event of a stream record, or `undefined` for a record that is not an INSERT
 * (a delete, or a modification nothing in the Plant Store makes).
 */
export function newPlantEventOf(record: PlantStreamRecord): NewPlantEvent | undefined {
  const image = record.dynamodb?.NewImage;
  if (record.eventName !== 'INSERT' || image === undefined || record.eventID === undefined) {
    return undefined;
  }
  const plant = storedPlantFromItem(unmarshall(image, { wrapNumbers: true }));
  return { webhookId: `msg_${record.eventID}`, payload: stringifyStoredPlant(plant) };
}
