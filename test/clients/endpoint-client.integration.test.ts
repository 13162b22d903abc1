/**
 * `client.webhookEndpoints` against the local API: a subscriber registering, verifying with the
 * client's own verifier, testing, rotating, recovering and deleting, as docs/webhooks.md shows.
 *
 * @services dynamodb-local
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  PlantStoreClient,
  PlantStoreError,
  PlantStoreWebhooks,
} from '../../clients/typescript/src/index.ts';
import { type EndpointBed, eventually, startEndpointBed } from '../api/endpoint-bed.ts';

let bed: EndpointBed;
let endpoints: PlantStoreClient['webhookEndpoints'];

beforeAll(async () => {
  bed = await startEndpointBed();
  const token = bed.api.signToken({ scope: 'webhooks/manage plants/read', subject: 'client-sdk' });
  endpoints = new PlantStoreClient({ baseUrl: bed.api.url, token }).webhookEndpoints;
}, 180_000);

afterAll(async () => {
  await bed?.stop();
});

describe('client.webhookEndpoints', () => {
  it('registers, verifies, tests, rotates, recovers and deletes', async () => {
    const receiver = await bed.receiver();
    const created = await endpoints.create({ url: receiver.url, description: 'SDK' });
    expect(created).toMatchObject({ url: receiver.url, format: 'event', enabled: true });
    receiver.setSecret(created.secret);
    expect((await endpoints.get(created.id)).description).toBe('SDK');

    const eventId = await endpoints.test(created.id);
    await receiver.waitForAccepted(1);
    const [test] = receiver.deliveries;
    const verified = new PlantStoreWebhooks(created.secret).verify(
      test?.body ?? '',
      test?.headers ?? {},
    );
    expect(verified).toMatchObject({ webhookId: eventId, format: 'test' });

    const rotated = await endpoints.rotateSecret(created.id);
    expect(await endpoints.secret(created.id)).toBe(rotated);
    await bed.createPlant(41);
    await receiver.waitForAccepted(2);
    const plant = receiver.deliveries.find((delivery) => delivery.body.includes('"id":41'));
    for (const secret of [created.secret, rotated]) {
      expect(
        new PlantStoreWebhooks(secret).verify(plant?.body ?? '', plant?.headers ?? {}),
      ).toMatchObject({
        format: 'event',
        event: { type: 'plant.created', data: { id: 41n } },
      });
    }
    // Recorded once the receiver has answered: read until both are there, a page at a time.
    let attempts: { type: string }[] = [];
    await eventually(async () => {
      attempts = [];
      for await (const attempt of endpoints.attempts(created.id, { limit: 1 })) {
        attempts.push(attempt);
      }
      return attempts.length === 2;
    });
    expect(attempts.map((attempt) => attempt.type)).toEqual(['plant.created', 'webhook.test']);

    expect(await endpoints.update(created.id, { enabled: false })).toMatchObject({
      enabled: false,
    });
    await expect(
      endpoints.recover(created.id, new Date(Date.now() - 60_000)),
    ).rejects.toMatchObject({
      status: 409,
      error: 40900,
    });
    await endpoints.update(created.id, { enabled: true });
    expect(await endpoints.recover(created.id, new Date(Date.now() - 60_000))).toBe(0);

    const listed = [];
    for await (const endpoint of endpoints.list()) listed.push(endpoint.id);
    expect(listed).toEqual([created.id]);
    await endpoints.delete(created.id);
    await expect(endpoints.get(created.id)).rejects.toBeInstanceOf(PlantStoreError);
  });
});
