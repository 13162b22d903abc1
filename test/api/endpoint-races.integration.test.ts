/**
 * Webhook endpoints under repetition and races, through the local API: `recover` never doubles
 * a delivery however often it is called, and queues at most 1,000 events a call; `test` and
 * `recover` have limits per endpoint; concurrent writers (a rotation and a `PATCH`, creates at
 * the 50-endpoint limit) all survive or fail cleanly; `DELETE` evaluates its preconditions; an
 * immediate rotation revokes the old secret at once; and an endpoint hears of every event
 * committed after its create was answered.
 *
 * @services dynamodb-local
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import type { WebhookReceiver } from '../../beds/webhook-receiver.ts';
import { createDocumentClient } from '../../functions/shared/platform/dynamodb.ts';
import type { PlantEvent } from '../../functions/shared/webhooks/plant-events.ts';
import { keepEvents } from '../../functions/webhook-endpoints/webhook-log.ts';
import {
  type Answer,
  type EndpointBed,
  eventually,
  retried,
  startEndpointBed,
} from './endpoint-bed.ts';

let bed: EndpointBed | undefined;

afterEach(async () => {
  // Its deliveries under way are cut short and recorded first: more than a hook's 5 s when busy.
  const stopping = bed;
  bed = undefined;
  await stopping?.stop();
}, 180_000);

async function started(options: Parameters<typeof startEndpointBed>[0] = {}) {
  bed = await startEndpointBed(options);
  return bed;
}

const settle = (milliseconds: number) =>
  new Promise((resolve) => setTimeout(resolve, milliseconds));

describe('recover', () => {
  it('keeps at most one delivery of each event under way, however often it is called', async () => {
    // Three attempts each, a second apart: enough to see any second delivery of an event.
    const { receiver, register, createPlant, request } = await started({
      retrySchedule: [1, 1],
    });
    const hooks = await receiver();
    const { id } = await register('client-a', hooks);
    const since = new Date(Date.now() - 1000).toISOString();
    await request('client-a', 'PATCH', `/webhook-endpoints/${id}`, '{"enabled":false}', {
      'Content-Type': 'application/merge-patch+json',
      'If-Match': '*',
    });
    for (let plant = 1; plant <= 10; plant += 1) await createPlant(plant);
    await settle(1000);
    hooks.setMode('fail');
    await request('client-a', 'PATCH', `/webhook-endpoints/${id}`, '{"enabled":true}', {
      'Content-Type': 'application/merge-patch+json',
      'If-Match': '*',
    });
    const calls = await Promise.all(
      Array.from({ length: 4 }, () =>
        request('client-a', 'POST', `/webhook-endpoints/${id}/recover`, { since }),
      ),
    );
    expect(calls.map((call) => call.status)).toEqual(Array(4).fill(202));
    // Ten events queued in all, whichever call queued each.
    expect(calls.reduce((sum, call) => sum + call.body.events, 0)).toBe(10);
    // A fifth while their deliveries are under way queues none of them again.
    const again = await request('client-a', 'POST', `/webhook-endpoints/${id}/recover`, { since });
    expect(again.body).toEqual({ events: 0, more: false });
    // Every attempt of every event made (three each), and nothing more.
    await eventually(() => hooks.deliveries.length >= 30, 20_000);
    await settle(2500);
    const perEvent = new Map<string, number>();
    for (const delivery of hooks.deliveries) {
      perEvent.set(delivery.webhookId, (perEvent.get(delivery.webhookId) ?? 0) + 1);
    }
    expect(perEvent.size).toBe(10);
    expect([...perEvent.values()]).toEqual(Array(10).fill(3));
  }, 180_000);

  it('queues at most 1,000 events a call and says when more were missed', async () => {
    // Each first attempt fails and its retry waits ten minutes: no delivery ends meanwhile (an
    // ended one may be recovered again).
    const { receiver, register, request, api } = await started({ retrySchedule: [600] });
    const hooks = await receiver();
    hooks.setMode('fail');
    const { id } = await register('client-a', hooks);
    // 1,001 events kept in the log since the endpoint's creation (as the fan-out keeps them).
    const start = Date.now() + 1000;
    const events: PlantEvent[] = Array.from({ length: 1001 }, (_, index) => ({
      webhookId: `msg_cap${index}_v1`,
      type: 'plant.created',
      id: BigInt(10_000 + index),
      plant: { id: BigInt(10_000 + index), name: 'Fern' },
      version: 1,
      occurredAt: start + index,
    }));
    const documentClient = createDocumentClient({ url: api.storeUrl });
    try {
      await keepEvents(events, { documentClient, logTableName: `${api.tableName}-webhook-log` });
    } finally {
      documentClient.destroy();
    }
    await settle(Math.max(0, start + 1100 - Date.now()));
    const since = new Date(start - 5000).toISOString();
    // As a client calls it: again after a 503 (a busy machine can spend a call's time on its
    // claims; what it queued stays queued), until answered.
    const recover = () =>
      retried(() => request('client-a', 'POST', `/webhook-endpoints/${id}/recover`, { since }));
    const first = await recover();
    const second = await recover();
    for (const answers of [first, second]) {
      expect(answers.filter((answer) => ![202, 503].includes(answer.status))).toEqual([]);
    }
    if (first.length === 1) {
      // Answered at once: the cap, then the one left.
      expect(first[0]?.body).toEqual({ events: 1000, more: true });
      expect(second.at(-1)?.body).toEqual({ events: 1, more: false });
    } else {
      // Cut short first: never more than the cap a call, and nothing more to say at the end.
      expect(first.at(-1)?.body.events).toBeLessThanOrEqual(1000);
      expect(second.at(-1)?.body.more).toBe(false);
    }
  }, 180_000);

  it('answers 429/42900 with Retry-After past 5 recovers, and 10 tests, a minute per endpoint', async () => {
    const { receiver, register, request } = await started();
    const hooks = await receiver();
    const { id } = await register('client-a', hooks);
    const since = new Date(Date.now() - 1000).toISOString();
    const recovers = [];
    for (let call = 0; call < 6; call += 1) {
      recovers.push(
        await request('client-a', 'POST', `/webhook-endpoints/${id}/recover`, { since }),
      );
    }
    const tests = [];
    for (let call = 0; call < 11; call += 1) {
      tests.push(await request('client-a', 'POST', `/webhook-endpoints/${id}/test`));
    }
    // One window may end between two calls: then the next window's count starts.
    for (const [answers, limit] of [
      [recovers, 5],
      [tests, 10],
    ] as const) {
      const refused = answers.filter((answer) => answer.status === 429);
      expect(answers.length - refused.length).toBeGreaterThanOrEqual(limit);
      if (answers.at(-1)?.status === 429) {
        expect(answers.at(-1)?.body).toEqual({ error: 42900, message: expect.any(String) });
        expect(Number(answers.at(-1)?.headers.get('retry-after'))).toBeGreaterThan(0);
      }
    }
    expect([recovers.at(-1)?.status, tests.at(-1)?.status]).toContain(429);
  }, 180_000);
});

describe('concurrent writers', () => {
  it('lands every one of many concurrent rotations racing PATCHes, or refuses it as documented', async () => {
    const { receiver, register, request } = await started();
    const { id } = await register('client-a', await receiver());
    const patchHeaders = { 'Content-Type': 'application/merge-patch+json', 'If-Match': '*' };
    for (let round = 0; round < 3; round += 1) {
      // Each as a client sends it: again after a 503 (the store slow on a busy machine); a 429
      // is an answer here.
      const againAfter503 = async (call: () => Promise<Answer>) => {
        const chain = [await call()];
        while (chain.at(-1)?.status === 503 && chain.length < 10) {
          await new Promise((resolve) => setTimeout(resolve, 1_000));
          chain.push(await call());
        }
        return chain;
      };
      const answered = await Promise.all([
        ...Array.from({ length: 30 }, () =>
          againAfter503(() =>
            request('client-a', 'POST', `/webhook-endpoints/${id}/secret/rotate`),
          ),
        ),
        ...Array.from({ length: 10 }, (_, index) =>
          againAfter503(() =>
            request(
              'client-a',
              'PATCH',
              `/webhook-endpoints/${id}`,
              JSON.stringify({ description: `race ${round}.${index}` }),
              patchHeaders,
            ),
          ),
        ),
      ]);
      const answers = answered.map((chain) => chain.at(-1) as (typeof chain)[number]);
      // Never a 500 on the way; in the end a rotation lands or meets the per-client limit (429),
      // a PATCH lands or finds another PATCH landed first (412, as `If-Match` says).
      expect(answered.flat().filter((answer) => answer.status === 500)).toEqual([]);
      const statuses = answers.map(
        (answer, index) => `${index < 30 ? 'rotate' : 'patch'} ${answer.status}`,
      );
      expect(
        statuses.filter((status) => !/^(rotate (200|429)|patch (200|412|429))$/.test(status)),
      ).toEqual([]);
      const rotations = answers.slice(0, 30).filter((answer) => answer.status === 200);
      expect(rotations.length).toBeGreaterThan(0);
      const secret = await request('client-a', 'GET', `/webhook-endpoints/${id}/secret`);
      expect(rotations.map((answer) => answer.body.secret)).toContain(secret.body.secret);
    }
  }, 180_000);

  it('keeps both a rotation and a PATCH made at the same time, 40 times in 40', async () => {
    const { receiver, register, request } = await started();
    const hooks = await receiver();
    const { id } = await register('client-a', hooks);
    const patchHeaders = { 'Content-Type': 'application/merge-patch+json', 'If-Match': '*' };
    for (let round = 0; round < 40; round += 1) {
      const description = `round ${round}`;
      const [rotated, patched] = await Promise.all([
        request('client-a', 'POST', `/webhook-endpoints/${id}/secret/rotate`),
        request(
          'client-a',
          'PATCH',
          `/webhook-endpoints/${id}`,
          JSON.stringify({ description, enabled: round % 2 === 0 }),
          patchHeaders,
        ),
      ]);
      expect([rotated.status, patched.status]).toEqual([200, 200]);
      const [secret, endpoint] = await Promise.all([
        request('client-a', 'GET', `/webhook-endpoints/${id}/secret`),
        request('client-a', 'GET', `/webhook-endpoints/${id}`),
      ]);
      expect({ round, secret: secret.body.secret }).toEqual({ round, secret: rotated.body.secret });
      expect({
        round,
        description: endpoint.body.description,
        enabled: endpoint.body.enabled,
      }).toEqual({
        round,
        description,
        enabled: round % 2 === 0,
      });
    }
  }, 120_000);

  it('stops at 50 endpoints however many creates race: 20 at once with 45 made leave 50', async () => {
    const { request } = await started();
    const url = 'http://127.0.0.1:9/hooks';
    for (let index = 0; index < 45; index += 1) {
      expect((await request('client-a', 'POST', '/webhook-endpoints', { url })).status).toBe(201);
    }
    const racing = await Promise.all(
      Array.from({ length: 20 }, () => request('client-a', 'POST', '/webhook-endpoints', { url })),
    );
    const statuses = racing.map((answer) => answer.status).sort();
    expect(statuses).toEqual([...Array(5).fill(201), ...Array(15).fill(400)]);
    for (const refused of racing.filter((answer) => answer.status === 400)) {
      expect(refused.body.error).toBe(40029);
    }
    const listed = await request('client-a', 'GET', '/webhook-endpoints?limit=100');
    expect(listed.body).toHaveLength(50);
    // A delete makes room for exactly one more.
    const last = listed.body[49].id as string;
    expect((await request('client-a', 'DELETE', `/webhook-endpoints/${last}`)).status).toBe(204);
    const refill = await Promise.all(
      Array.from({ length: 3 }, () => request('client-a', 'POST', '/webhook-endpoints', { url })),
    );
    expect(refill.map((answer) => answer.status).sort()).toEqual([201, 400, 400]);
  }, 120_000);
});

describe('DELETE /webhook-endpoints/{endpointId} with preconditions', () => {
  it('deletes only at the version If-Match names, and not at one If-None-Match names', async () => {
    const { receiver, register, request } = await started();
    const hooks = await receiver();
    const { id } = await register('client-a', hooks);
    const path = `/webhook-endpoints/${id}`;
    const etag = (await request('client-a', 'GET', path)).headers.get('etag') as string;
    const preconditions: Record<string, string>[] = [
      { 'If-Match': '"1"' },
      { 'If-Match': `W/${etag}` },
      { 'If-None-Match': '*' },
      { 'If-None-Match': etag },
    ];
    for (const headers of preconditions) {
      const refused = await request('client-a', 'DELETE', path, undefined, headers);
      expect({ headers, status: refused.status, error: refused.body?.error }).toEqual({
        headers,
        status: 412,
        error: 41200,
      });
    }
    expect((await request('client-a', 'GET', path)).status).toBe(200);
    const deleted = await request('client-a', 'DELETE', path, undefined, {
      'If-Match': etag,
      'If-None-Match': '"1"',
    });
    expect(deleted.status).toBe(204);
    expect((await request('client-a', 'GET', path)).status).toBe(404);
  });
});

describe('an immediate rotation', () => {
  it('signs the next delivery with the new secret alone: the old one verifies nothing more', async () => {
    const { receiver, register, request, createPlant } = await started();
    const hooks = await receiver();
    const { id, secret: old } = await register('client-a', hooks);
    const rotated = await request('client-a', 'POST', `/webhook-endpoints/${id}/secret/rotate`, {
      overlapSeconds: 0,
    });
    expect(rotated.status).toBe(200);
    hooks.setSecret(rotated.body.secret);
    await createPlant(1);
    await hooks.waitForAccepted(1);
    const [delivery] = hooks.deliveries;
    const headers = delivery?.headers as Record<string, string>;
    expect(String(headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(delivery?.verified).toBe(true);
    expect(() => new Webhook(old).verify(delivery?.body ?? '', headers)).toThrow();
    for (const overlapSeconds of [-1, 86_401, 1.5, '60', null]) {
      const refused = await request('client-a', 'POST', `/webhook-endpoints/${id}/secret/rotate`, {
        overlapSeconds,
      });
      expect({ overlapSeconds, status: refused.status, error: refused.body.error }).toEqual({
        overlapSeconds,
        status: 400,
        error: 40020,
      });
    }
  });
});

describe('a new endpoint', () => {
  it('hears of a plant created within 100 ms of its create’s answer, 10 times in 10', async () => {
    const { receiver, register, createPlant } = await started();
    const receivers: WebhookReceiver[] = [];
    for (let round = 0; round < 10; round += 1) {
      const hooks = await receiver();
      await register(`client-${round}`, hooks);
      await createPlant(100 + round);
      receivers.push(hooks);
    }
    const heard = (hooks: WebhookReceiver, plant: number) =>
      hooks.deliveries.some((delivery) => JSON.parse(delivery.body).data.id === plant);
    for (const [round, hooks] of receivers.entries()) {
      await eventually(() => heard(hooks, 100 + round), 10_000).catch(() => {});
      expect({ round, heard: heard(hooks, 100 + round) }).toEqual({ round, heard: true });
    }
  }, 180_000);
});
