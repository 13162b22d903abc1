/**
 * Webhook endpoints as their owners and receivers see them through the local API: a registered
 * endpoint gets each event signed with its own secret (verified by receivers with the Standard
 * Webhooks library), both secrets for a day after a rotation, a test event on demand, every
 * attempt in its log, what it missed again on `recover` (once each), nothing once deleted or
 * disabled, and disabled by itself after 5 days of failures (the clock moved).
 *
 * @services dynamodb-local
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { type EndpointBed, eventually, startEndpointBed } from './endpoint-bed.ts';

const day = 24 * 60 * 60 * 1000;
let bed: EndpointBed | undefined;

afterEach(async () => {
  await bed?.stop();
  bed = undefined;
});

async function started(options: Parameters<typeof startEndpointBed>[0] = {}) {
  bed = await startEndpointBed(options);
  return bed;
}

describe('deliveries to a webhook endpoint', () => {
  it('sends each event, signed with the endpoint\u2019s secret, in its format; only the types it hears of', async () => {
    const { receiver, register, createPlant } = await started();
    const events = await receiver();
    const plants = await receiver();
    await register('client-a', events);
    await register('client-a', plants, { format: 'plant' });
    await createPlant(7, 'Ivy');
    await events.waitForAccepted(1);
    await plants.waitForAccepted(1);
    const [event] = events.deliveries;
    expect(event?.verified).toBe(true);
    expect(JSON.parse(event?.body ?? '')).toEqual({
      type: 'plant.created',
      timestamp: expect.any(String),
      data: { id: 7, name: 'Ivy', version: expect.any(Number) },
    });
    expect(plants.deliveries[0]).toMatchObject({ verified: true, body: '{"id":7,"name":"Ivy"}' });
    expect(plants.deliveries).toHaveLength(1);
  });

  it('signs with both secrets for 24 hours after a rotation: a receiver with either verifies every event', async () => {
    const { receiver, register, createPlant, request, advance } = await started();
    const hooks = await receiver();
    const { id, secret: old } = await register('client-a', hooks);
    const rotated = await request('client-a', 'POST', `/webhook-endpoints/${id}/secret/rotate`);
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.secret as string;
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(old);
    expect((await request('client-a', 'GET', `/webhook-endpoints/${id}/secret`)).body).toEqual({
      secret: fresh,
    });
    await createPlant(1);
    await hooks.waitForAccepted(1);
    const during = hooks.deliveries[0];
    expect(String(during?.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const secret of [old, fresh]) {
      expect(() =>
        new Webhook(secret).verify(during?.body ?? '', during?.headers as Record<string, string>),
      ).not.toThrow();
    }
    // A day later, the new secret alone.
    advance(day + 1000);
    await createPlant(2);
    await hooks.waitForAccepted(2);
    const after = hooks.deliveries[1];
    expect(String(after?.headers['webhook-signature']).split(' ')).toHaveLength(1);
    const headers = after?.headers as Record<string, string>;
    expect(() => new Webhook(fresh).verify(after?.body ?? '', headers)).not.toThrow();
    expect(() => new Webhook(old).verify(after?.body ?? '', headers)).toThrow();
  });

  it('sends a signed webhook.test on demand, and shows every attempt newest first', async () => {
    const { receiver, register, createPlant, request } = await started();
    const hooks = await receiver();
    const { id } = await register('client-a', hooks);
    await createPlant(3);
    await hooks.waitForAccepted(1);
    const tested = await request('client-a', 'POST', `/webhook-endpoints/${id}/test`);
    expect(tested.status).toBe(202);
    expect(tested.body).toEqual({ eventId: expect.stringMatching(/^msg_test_[0-9a-f]{32}$/) });
    await hooks.waitForAccepted(2);
    const test = hooks.deliveries.find((delivery) => delivery.webhookId === tested.body.eventId);
    expect(test?.verified).toBe(true);
    expect(JSON.parse(test?.body ?? '')).toEqual({
      type: 'webhook.test',
      timestamp: expect.any(String),
      data: { endpointId: id },
    });
    let attempts: { type: string }[] = [];
    await eventually(async () => {
      attempts = (await request('client-a', 'GET', `/webhook-endpoints/${id}/attempts`)).body;
      return attempts.length === 2;
    });
    expect(attempts.map((attempt) => attempt.type)).toEqual(['webhook.test', 'plant.created']);
    for (const attempt of attempts) {
      expect(attempt).toEqual({
        eventId: expect.stringMatching(/^msg_/),
        type: expect.any(String),
        attempt: 1,
        outcome: 'delivered',
        responseStatus: 204,
        durationMilliseconds: expect.any(Number),
        attemptedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
        // The trace of the request that made the event (docs/tracing.md).
        traceId: expect.stringMatching(/^[0-9a-f]{32}$/),
      });
    }
  });

  it('sends nothing to a disabled endpoint, nothing missed on re-enabling, and each missed event exactly once on recover', async () => {
    const { receiver, register, createPlant, request } = await started();
    const hooks = await receiver();
    const since = new Date(Date.now() - 1000).toISOString();
    const { id } = await register('client-a', hooks);
    const etag = (await request('client-a', 'GET', `/webhook-endpoints/${id}`)).headers.get('etag');
    const patch = (body: unknown, match = '*') =>
      request('client-a', 'PATCH', `/webhook-endpoints/${id}`, body, {
        'Content-Type': 'application/merge-patch+json',
        'If-Match': match,
      });
    const disabled = await patch({ enabled: false }, etag ?? '');
    expect(disabled.body).toMatchObject({
      enabled: false,
      disabledReason: 'Disabled by its owner.',
    });
    expect(
      (await request('client-a', 'POST', `/webhook-endpoints/${id}/recover`, { since })).status,
    ).toBe(409);
    for (const plant of [11, 12, 13]) await createPlant(plant);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(hooks.deliveries).toEqual([]);
    const enabled = await patch({ enabled: true });
    expect(enabled.body.enabled).toBe(true);
    expect(enabled.body.disabledReason).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(hooks.deliveries).toEqual([]);
    await createPlant(14);
    await hooks.waitForAccepted(1);

    const recovered = await request('client-a', 'POST', `/webhook-endpoints/${id}/recover`, {
      since,
    });
    expect(recovered).toMatchObject({ status: 202, body: { events: 3 } });
    await hooks.waitForAccepted(4);
    // Once more: nothing left to recover.
    const again = await request('client-a', 'POST', `/webhook-endpoints/${id}/recover`, { since });
    expect(again.body).toEqual({ events: 0, more: false });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const ids = hooks.deliveries.map((delivery) => JSON.parse(delivery.body).data.id).sort();
    expect(ids).toEqual([11, 12, 13, 14]);
    expect(hooks.deliveries.every((delivery) => delivery.verified)).toBe(true);
  });

  it('disables an endpoint whose every attempt failed for 5 days, saying why; its owner enables it again', async () => {
    const { receiver, register, createPlant, request, advance } = await started();
    const hooks = await receiver();
    const { id } = await register('client-a', hooks);
    hooks.setMode('fail');
    await createPlant(21);
    await eventually(() => hooks.deliveries.length >= 3);
    advance(5 * day);
    await createPlant(22);
    let endpoint: { enabled?: boolean; disabledReason?: string } = {};
    await eventually(async () => {
      endpoint = (await request('client-a', 'GET', `/webhook-endpoints/${id}`)).body;
      return endpoint.enabled === false;
    });
    expect(endpoint.disabledReason).toMatch(
      /^Every delivery attempt failed for 5 days \(since .*\); the last one: answered HTTP 500\.$/,
    );
    hooks.setMode('ok');
    const count = hooks.deliveries.length;
    await createPlant(23);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(hooks.deliveries.length).toBe(count);
    const enabled = await request(
      'client-a',
      'PATCH',
      `/webhook-endpoints/${id}`,
      { enabled: true },
      {
        'Content-Type': 'application/merge-patch+json',
        'If-Match': '*',
      },
    );
    expect(enabled.body).toMatchObject({ enabled: true });
    await createPlant(24);
    await hooks.waitForAccepted(1);
  });

  it('delivers nothing to a deleted endpoint, a delivery already queued included', async () => {
    const { receiver, register, createPlant, request } = await started({ retrySchedule: [1] });
    const hooks = await receiver();
    const { id } = await register('client-a', hooks);
    hooks.setMode('fail');
    await createPlant(31);
    await eventually(() => hooks.deliveries.length === 1);
    expect((await request('client-a', 'DELETE', `/webhook-endpoints/${id}`)).status).toBe(204);
    hooks.setMode('ok');
    await createPlant(32);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    // The retry found the endpoint gone; the new plant had no endpoint to go to.
    expect(hooks.deliveries).toHaveLength(1);
    expect((await request('client-a', 'GET', `/webhook-endpoints/${id}`)).status).toBe(404);
  });
});
