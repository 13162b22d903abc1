/** Stream records read into plant events, by the fan-out and the replay alone. */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import * as v from 'valibot';
import { readVersionedPlant, traceAttribute, type VersionedPlant } from '../plants/stored-plant.ts';
import { parseTraceparent } from '../platform/trace-context.ts';
import { type PlantEvent, webhookIdOf } from './plant-events.ts';

/** A stream record as Lambda's DynamoDB event and the DynamoDB Streams API both carry it. */
export interface PlantStreamRecord {
  /** Unique per record in the stream. */
  readonly eventID?: string;
  readonly eventName?: string;
  readonly dynamodb?: {
    readonly NewImage?: Record<string, AttributeValue>;
    readonly OldImage?: Record<string, AttributeValue>;
    readonly SequenceNumber?: string;
    /** Seconds since the epoch in Lambda's event; a Date from the Streams API. */
    readonly ApproximateCreationDateTime?: number | Date;
  };
}

/** A stream record the fan-out reads: its id, its kind, and the images it carries. */
const streamRecordSchema = v.object({
  eventID: v.string(),
  eventName: v.picklist(['INSERT', 'MODIFY', 'REMOVE']),
  dynamodb: v.optional(
    v.object({
      // Read as plants below (`imageOf`); here only objects.
      NewImage: v.optional(v.looseObject({})),
      OldImage: v.optional(v.looseObject({})),
      SequenceNumber: v.optional(v.string()),
      ApproximateCreationDateTime: v.optional(v.union([v.number(), v.date()])),
    }),
  ),
});

/**
 * The event of a stream record, or `undefined` (no change, or a MODIFY of neither name nor tag).
 * @throws Error when an image the event needs is not a plant.
 */
export function plantEventOf(record: PlantStreamRecord, now: number): PlantEvent | undefined {
  if (!v.is(streamRecordSchema, record)) return undefined;
  const { eventID, eventName, dynamodb } = record;
  const occurredAt = timeOf(dynamodb?.ApproximateCreationDateTime) ?? now;
  const base = (version: number) => ({
    webhookId: webhookIdOf(eventID, version),
    occurredAt,
    version,
    traceparent: traceparentOf(dynamodb?.NewImage),
  });
  switch (eventName) {
    case 'INSERT': {
      const { plant, version } = imageOf(dynamodb?.NewImage);
      return { ...base(version), type: 'plant.created', id: plant.id, plant };
    }
    case 'MODIFY': {
      const { plant, version } = imageOf(dynamodb?.NewImage);
      // An old image that is not a plant (another tool wrote it) changed into one: an update.
      const old = readImage(dynamodb?.OldImage)?.plant;
      if (old !== undefined && old.name === plant.name && old.tag === plant.tag) return undefined;
      return { ...base(version), type: 'plant.updated', id: plant.id, plant };
    }
    case 'REMOVE': {
      // DynamoDB Local records a DeleteItem that found nothing (AWS does not): nothing removed.
      if (dynamodb?.OldImage === undefined) return undefined;
      const { plant, version } = imageOf(dynamodb.OldImage);
      return { ...base(version + 1), type: 'plant.deleted', id: plant.id };
    }
    default:
      return undefined;
  }
}

/** The plant and version of a stream image, or `undefined` when it is none. */
function readImage(image: Record<string, AttributeValue> | undefined): VersionedPlant | undefined {
  return image && readVersionedPlant(unmarshall(image, { wrapNumbers: true }));
}

/** The plant and version of a stream image that must be one. */
function imageOf(image: Record<string, AttributeValue> | undefined): VersionedPlant {
  const found = readImage(image);
  if (found === undefined) throw new Error('A plants table item is not a plant.');
  return found;
}

/**
 * The `traceparent` the write of an image kept, when valid. A delete's record has only the old
 * image, the span of the plant's last write, not the delete's: a delete carries none.
 */
function traceparentOf(image: Record<string, AttributeValue> | undefined): string | undefined {
  const value = image?.[traceAttribute]?.S;
  return parseTraceparent(value) === undefined ? undefined : value;
}

/** Milliseconds since the epoch of the record's approximate time, when it has one. */
function timeOf(value: number | Date | undefined): number | undefined {
  if (value instanceof Date) return value.getTime();
  return typeof value === 'number' && Number.isFinite(value) ? Math.round(value * 1000) : undefined;
}
