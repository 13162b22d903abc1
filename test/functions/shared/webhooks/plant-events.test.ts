import { marshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from '@jest/globals';
import {
  subscriptionOf,
  versionOfWebhookId,
  webhookFor,
} from '../../../../functions/shared/webhooks/plant-events.ts';
import {
  type PlantStreamRecord,
  plantEventOf,
} from '../../../../functions/shared/webhooks/stream-records.ts';

const id = 9_223_372_036_854_775_807n;
const image = (item: Record<string, unknown>) => marshall(item);
const record = (
  eventName: string,
  images: { NewImage?: Record<string, unknown>; OldImage?: Record<string, unknown> },
): PlantStreamRecord => ({
  eventID: 'e1',
  eventName,
  dynamodb: {
    ...(images.NewImage === undefined ? {} : { NewImage: image(images.NewImage) }),
    ...(images.OldImage === undefined ? {} : { OldImage: image(images.OldImage) }),
    ApproximateCreationDateTime: 1_795_000_000,
  },
});
const fern = { id, name: 'Fern', tag: 'shade', version: 1_795_000_000_123 };
const plantFormat = subscriptionOf('audit', {});
const eventFormat = subscriptionOf('search', { format: 'event' });

describe('plant events of stream records', () => {
  it('reads an INSERT as plant.created, with its version and the record’s time', () => {
    expect(plantEventOf(record('INSERT', { NewImage: fern }), 0)).toEqual({
      webhookId: `msg_e1_v${fern.version}`,
      type: 'plant.created',
      id,
      plant: { id, name: 'Fern', tag: 'shade' },
      version: 1_795_000_000_123,
      occurredAt: 1_795_000_000_000,
    });
  });

  it('reads a MODIFY of the name or tag as plant.updated, and one that changed neither as nothing', () => {
    const renamed = { ...fern, name: 'Moss', version: fern.version + 1 };
    expect(plantEventOf(record('MODIFY', { OldImage: fern, NewImage: renamed }), 0)).toMatchObject({
      type: 'plant.updated',
      plant: { id, name: 'Moss', tag: 'shade' },
      version: fern.version + 1,
    });
    const untagged = { id, name: 'Fern', version: fern.version + 1 };
    expect(plantEventOf(record('MODIFY', { OldImage: fern, NewImage: untagged }), 0)).toMatchObject(
      {
        type: 'plant.updated',
        plant: { id, name: 'Fern' },
      },
    );
    const versionOnly = { ...fern, version: fern.version + 1 };
    expect(
      plantEventOf(record('MODIFY', { OldImage: fern, NewImage: versionOnly }), 0),
    ).toBeUndefined();
  });

  it('reads a REMOVE as plant.deleted, its version one above the removed plant’s', () => {
    expect(plantEventOf(record('REMOVE', { OldImage: fern }), 0)).toMatchObject({
      type: 'plant.deleted',
      id,
      version: fern.version + 1,
    });
    expect(plantEventOf(record('REMOVE', { OldImage: fern }), 0)?.plant).toBeUndefined();
  });

  it('reads no event from a REMOVE without an old image (DynamoDB Local’s, for a delete of nothing)', () => {
    expect(plantEventOf(record('REMOVE', {}), 0)).toBeUndefined();
  });

  it('gives a plant written before versions existed version 0 (1 once deleted)', () => {
    expect(plantEventOf(record('INSERT', { NewImage: { id: 1n, name: 'Old' } }), 0)?.version).toBe(
      0,
    );
    expect(plantEventOf(record('REMOVE', { OldImage: { id: 1n, name: 'Old' } }), 0)?.version).toBe(
      1,
    );
  });

  it('refuses an image that is not a plant (the caller skips and counts it)', () => {
    for (const item of [
      { id: 1.5, name: 'x' },
      { id: 1n, name: 7 },
      { id: 1n, name: 'x', version: 'v' },
    ]) {
      expect(() => plantEventOf(record('INSERT', { NewImage: item }), 0)).toThrow('not a plant');
    }
  });

  it('takes the time from the Streams API’s Date too, and the clock when there is none', () => {
    const fromApi: PlantStreamRecord = {
      eventID: 'e2',
      eventName: 'INSERT',
      dynamodb: { NewImage: image(fern), ApproximateCreationDateTime: new Date(5_000) },
    };
    expect(plantEventOf(fromApi, 0)?.occurredAt).toBe(5_000);
    const timeless: PlantStreamRecord = {
      eventID: 'e3',
      eventName: 'INSERT',
      dynamodb: { NewImage: image(fern) },
    };
    expect(plantEventOf(timeless, 42)?.occurredAt).toBe(42);
  });
});

describe('the trace of a change', () => {
  const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

  it('is the writing request’s span the item keeps, carried to each subscriber’s webhook', () => {
    const event = plantEventOf(record('INSERT', { NewImage: { ...fern, traceparent } }), 0);
    expect(event?.traceparent).toBe(traceparent);
    for (const subscription of [plantFormat, eventFormat]) {
      expect(webhookFor(event as never, subscription)?.traceparent).toBe(traceparent);
    }
  });

  it('is none when the item keeps no valid one, nor for a delete (the old image is another write’s)', () => {
    const invalid = { ...fern, traceparent: traceparent.toUpperCase() };
    expect(plantEventOf(record('INSERT', { NewImage: invalid }), 0)?.traceparent).toBeUndefined();
    const removed = plantEventOf(record('REMOVE', { OldImage: { ...fern, traceparent } }), 0);
    expect(removed?.type).toBe('plant.deleted');
    expect(removed?.traceparent).toBeUndefined();
  });
});

describe('the webhook each subscriber gets', () => {
  const created = plantEventOf(record('INSERT', { NewImage: fern }), 0);
  const deleted = plantEventOf(record('REMOVE', { OldImage: fern }), 0);
  if (created === undefined || deleted === undefined) throw new Error('no events');

  it('is the exact StoredPlant in the plant format, and nothing for other types', () => {
    expect(webhookFor(created, plantFormat)).toEqual({
      webhookId: `msg_e1_v${fern.version}`,
      version: fern.version,
      payload: `{"id":${id},"name":"Fern","tag":"shade"}`,
    });
    expect(webhookFor(deleted, plantFormat)).toBeUndefined();
  });

  it('is the Standard Webhooks envelope in the event format, the exact id and the version in data', () => {
    expect(webhookFor(created, eventFormat)?.payload).toBe(
      `{"type":"plant.created","timestamp":"2026-11-18T11:06:40.000Z","data":{"id":${id},"name":"Fern","tag":"shade","version":${fern.version}}}`,
    );
    expect(webhookFor(deleted, eventFormat)?.payload).toBe(
      `{"type":"plant.deleted","timestamp":"2026-11-18T11:06:40.000Z","data":{"id":${id},"version":${fern.version + 1}}}`,
    );
    const deletesOnly = subscriptionOf('d', { format: 'event', events: ['plant.deleted'] });
    expect(webhookFor(created, deletesOnly)).toBeUndefined();
  });
});

describe('subscriptions', () => {
  it('default to the plant format and creates, or every type in the event format', () => {
    expect(subscriptionOf('a', {})).toEqual({
      name: 'a',
      events: ['plant.created'],
      format: 'plant',
    });
    expect(subscriptionOf('b', { format: 'event' })).toEqual({
      name: 'b',
      events: ['plant.created', 'plant.updated', 'plant.deleted'],
      format: 'event',
    });
  });

  it.each([
    [{ format: 'xml' }, 'format must be plant or event'],
    [{ events: ['plant.updated'] }, 'the plant format carries plant.created only'],
    [{ format: 'event', events: ['plant.moved'] }, 'events must be among'],
    [{ format: 'event', events: [] }, 'events is empty'],
  ])('refuses %j naming the subscriber', (settings, message) => {
    expect(() => subscriptionOf('audit', settings)).toThrow(`Webhook subscriber audit: ${message}`);
  });
});

describe('the version, signed', () => {
  it('is in the webhook-id, which Standard Webhooks signs, so that no header can change it', () => {
    const created = plantEventOf(record('INSERT', { NewImage: fern }), 0);
    const deleted = plantEventOf(record('REMOVE', { OldImage: fern }), 0);
    expect(created?.webhookId).toBe(`msg_e1_v${fern.version}`);
    expect(deleted?.webhookId).toBe(`msg_e1_v${fern.version + 1}`);
    expect(versionOfWebhookId(created?.webhookId ?? '')).toBe(fern.version);
    expect(versionOfWebhookId('msg_e1')).toBeUndefined();
    expect(versionOfWebhookId('msg_e1_v007')).toBeUndefined();
  });
});
