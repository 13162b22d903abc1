/**
 * The change events as subscribers see them through the local API: plant.created,
 * plant.updated and plant.deleted from DynamoDB Local's stream, each subscriber hearing only of
 * the types it chose, in its format, to real receivers verifying every signature with the
 * Standard Webhooks library. Bodies are checked against openapi.yaml's webhooks.
 *
 * @services dynamodb-local
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  type ReceivedDelivery,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../../beds/webhook-receiver.ts';
import { PlantStoreWebhooks } from '../../clients/typescript/src/index.ts';
import { createLogger } from '../../functions/shared/platform/logger.ts';
import { type LocalApi, startLocalApi } from '../../local/local-api.ts';
import type { LocalSubscriber } from '../../local/local-webhooks.ts';
import { testStoreUrl } from '../support/test-store.ts';
import { schemaValidator } from './openapi.ts';

const secret = `whsec_${randomBytes(32).toString('base64')}`;
let keysDirectory: string;
let api: LocalApi;
/** Default subscriber: the plant format, new plants only (what every existing one has). */
let plants: WebhookReceiver;
/** Every type in the event format. */
let everything: WebhookReceiver;
/** Deletes only, in the event format. */
let deletes: WebhookReceiver;

beforeAll(async () => {
  keysDirectory = await mkdtemp(join(tmpdir(), 'plant-store-change-webhook-keys-'));
  [plants, everything, deletes] = await Promise.all([
    startWebhookReceiver(secret),
    startWebhookReceiver(secret),
    startWebhookReceiver(secret),
  ]);
  const subscribers: LocalSubscriber[] = [
    { name: 'plants', url: plants.url, secret },
    { name: 'everything', url: everything.url, secret, format: 'event' },
    { name: 'deletes', url: deletes.url, secret, format: 'event', events: ['plant.deleted'] },
  ];
  api = await startLocalApi({
    port: 0,
    dynamoDbUrl: testStoreUrl(),
    tableName: `plants-change-webhooks-${process.pid}-${Date.now()}`,
    keysDirectory,
    throttlingStage: 'off',
    logger: createLogger({}, () => {}),
    webhooks: { subscribers },
  });
});

afterAll(async () => {
  await api?.stop();
  for (const receiver of [plants, everything, deletes]) await receiver?.stop();
  await rm(keysDirectory, { recursive: true, force: true });
});

async function send(
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  const response = await fetch(`${api.url}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${api.signToken()}`,
      'Content-Type': 'application/json',
      ...headers,
    },
    ...(body === undefined ? {} : { body }),
  });
  await response.body?.cancel();
  return response;
}

/** The events a receiver accepted, parsed, in version order. */
function eventsOf(
  receiver: WebhookReceiver,
): { body: Record<string, unknown>; delivery: ReceivedDelivery }[] {
  return [...receiver.accepted().values()]
    .map((delivery) => ({ body: JSON.parse(delivery.body) as Record<string, unknown>, delivery }))
    .sort((a, b) => Number(a.delivery.plantVersion) - Number(b.delivery.plantVersion));
}

describe('change webhooks', () => {
  it('tells each subscriber of the types it chose, in its format, signed, with versions that grow; no-ops and missing plants send nothing', async () => {
    const patchHeaders = { 'Content-Type': 'application/merge-patch+json', 'If-Match': '*' };
    const id = '9223372036854775807';
    expect((await send('POST', '/plants', `{"id":${id},"name":"Fern","tag":"shade"}`)).status).toBe(
      200,
    );
    // A no-op change, a change of a missing plant and a delete of a missing plant: no events.
    expect(
      (await send('PUT', `/plants/${id}`, '{"name":"Fern","tag":"shade"}', { 'If-Match': '*' }))
        .status,
    ).toBe(200);
    expect((await send('PATCH', '/plants/5', '{"tag":"x"}', patchHeaders)).status).toBe(404);
    expect((await send('DELETE', '/plants/5')).status).toBe(204);
    // Two changes and a delete.
    expect(
      (await send('PUT', `/plants/${id}`, '{"name":"Fern"}', { 'If-Match': '*' })).status,
    ).toBe(200);
    expect((await send('PATCH', `/plants/${id}`, '{"tag":"sun"}', patchHeaders)).status).toBe(200);
    expect((await send('DELETE', `/plants/${id}`)).status).toBe(204);
    // Created again: a new plant with a higher version.
    expect((await send('POST', '/plants', `{"id":${id},"name":"Fern"}`)).status).toBe(200);

    await Promise.all([
      plants.waitForAccepted(2),
      everything.waitForAccepted(5),
      deletes.waitForAccepted(1),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 500)); // nothing more may come
    // The client's verifier reads every delivery: signed, exact id, typed by format.
    const verifier = new PlantStoreWebhooks(secret);
    for (const receiver of [plants, everything, deletes]) {
      for (const delivery of receiver.deliveries) {
        expect(delivery).toMatchObject({ verified: true, contentType: 'application/json' });
        expect(delivery.plantVersion).toMatch(/^[1-9][0-9]*$/);
        const verified = verifier.verify(delivery.body, delivery.headers);
        expect(verified.version).toBe(Number(delivery.plantVersion));
        if (verified.format === 'test') throw new Error('no test event was asked for');
        const plantId = verified.format === 'plant' ? verified.plant.id : verified.event.data.id;
        expect(plantId).toBe(BigInt(id));
        expect(verified.format).toBe(receiver === plants ? 'plant' : 'event');
      }
    }

    // The plant format: the StoredPlant exactly as before, creates only.
    expect(plants.deliveries.map((delivery) => delivery.body)).toEqual([
      `{"id":${id},"name":"Fern","tag":"shade"}`,
      `{"id":${id},"name":"Fern"}`,
    ]);
    for (const { body } of eventsOf(plants))
      expect(schemaValidator('StoredPlant')(body)).toBe(true);

    // The event format: every type, the envelope, data with the version of the header.
    const events = eventsOf(everything);
    expect(everything.deliveries).toHaveLength(5);
    expect(events.map(({ body }) => [body.type, body.data])).toEqual([
      [
        'plant.created',
        { id: expect.anything(), name: 'Fern', tag: 'shade', version: expect.any(Number) },
      ],
      ['plant.updated', { id: expect.anything(), name: 'Fern', version: expect.any(Number) }],
      [
        'plant.updated',
        { id: expect.anything(), name: 'Fern', tag: 'sun', version: expect.any(Number) },
      ],
      ['plant.deleted', { id: expect.anything(), version: expect.any(Number) }],
      ['plant.created', { id: expect.anything(), name: 'Fern', version: expect.any(Number) }],
    ]);
    for (const { body, delivery } of events) {
      const schema = body.type === 'plant.deleted' ? 'PlantDeletedEvent' : 'PlantChangedEvent';
      expect([schema, schemaValidator(schema)(body)]).toEqual([schema, true]);
      // The exact int64 id, as written (a JSON.parse above rounded it).
      expect(delivery.body).toContain(`"id":${id}`);
      expect(String((body.data as { version: number }).version)).toBe(delivery.plantVersion);
      // The stream's time of the change, to the second as AWS gives it (not DynamoDB Local's
      // minute): at most a second before the delivery, which came moments after the change.
      const timestamp = Date.parse(body.timestamp as string);
      expect(timestamp % 1000).toBe(0);
      expect(delivery.receivedAt - timestamp).toBeGreaterThanOrEqual(0);
      expect(delivery.receivedAt - timestamp).toBeLessThan(5_000);
    }
    const versions = events.map(({ delivery }) => Number(delivery.plantVersion));
    expect(new Set(versions).size).toBe(5);
    // The same events reach both formats under the same webhook-ids.
    const createdIds = events
      .filter(({ body }) => body.type === 'plant.created')
      .map(({ delivery }) => delivery.webhookId);
    expect(plants.deliveries.map((delivery) => delivery.webhookId).sort()).toEqual(
      createdIds.sort(),
    );

    // Deletes only.
    expect(deletes.deliveries.map((delivery) => JSON.parse(delivery.body).type)).toEqual([
      'plant.deleted',
    ]);
    expect(deletes.deliveries[0]?.webhookId).toBe(
      events.find(({ body }) => body.type === 'plant.deleted')?.delivery.webhookId,
    );
  });
});
