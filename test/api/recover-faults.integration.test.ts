/**
 * A recover cut short by the store: DynamoDB Local paused (behind a proxy that holds its bytes)
 * while a recover claims its events. Whatever the first call answers, the client's retries (on
 * 503, after `Retry-After`) end with every event delivered once and no claim left pending.
 *
 * @services dynamodb-local
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from '@jest/globals';
import { type FaultProxy, startFaultProxy } from '../../beds/fault-proxy.ts';
import { createDocumentClient } from '../../functions/shared/platform/dynamodb.ts';
import { testStoreUrl } from '../support/test-store.ts';
import { type EndpointBed, eventually, retried, startEndpointBed } from './endpoint-bed.ts';

let bed: EndpointBed | undefined;
let proxy: FaultProxy | undefined;

afterEach(async () => {
  proxy?.resume();
  await bed?.stop();
  await proxy?.stop();
  bed = undefined;
  proxy = undefined;
}, 180_000);

const settle = (milliseconds: number) =>
  new Promise((resolve) => setTimeout(resolve, milliseconds));

/** The endpoint's deliveries in the log that are still pending. */
async function pendingClaims(endpointId: string, logTableName: string) {
  const client = createDocumentClient({ url: testStoreUrl() });
  try {
    const { Items = [] } = await client.send(
      new QueryCommand({
        TableName: logTableName,
        KeyConditionExpression: 'pk = :pk',
        FilterExpression: '#state = :pending',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':pk': `delivery#${endpointId}`, ':pending': 'pending' },
        ConsistentRead: true,
      }),
    );
    return Items.length;
  } finally {
    client.destroy();
  }
}

describe('a recover the store pauses part-way', () => {
  for (const pauseAfter of [150, 600]) {
    it(`recovers every event once when the store pauses ${pauseAfter} ms into it`, async () => {
      proxy = await startFaultProxy(testStoreUrl());
      bed = await startEndpointBed({}, proxy.url);
      const { receiver, register, createPlant, request, api } = bed;
      const hooks = await receiver();
      const { id } = await register('client-a', hooks, { events: ['plant.created'] });
      const disable = (enabled: boolean) =>
        request('client-a', 'PATCH', `/webhook-endpoints/${id}`, JSON.stringify({ enabled }), {
          'Content-Type': 'application/merge-patch+json',
          'If-Match': '*',
        });
      const since = new Date(Date.now() - 1000).toISOString();
      await disable(false);
      const plants = 120;
      for (let plant = 1; plant <= plants; plant += 1) await createPlant(plant);
      // The fan-out keeps every event in the log (none is sent: the endpoint is disabled).
      await settle(2000);
      expect(hooks.deliveries).toHaveLength(0);
      await disable(true);

      // Each store round trip is slowed, so that the claims are still being taken at the pause.
      proxy.slow(15);
      const store = proxy;
      let pausedAt = Number.POSITIVE_INFINITY;
      setTimeout(() => {
        pausedAt = Date.now();
        store.pause();
        setTimeout(() => store.resume(), 6_000);
      }, pauseAfter);
      let firstAnsweredAt: number | undefined;
      const answers = await retried(async () => {
        const answer = await request('client-a', 'POST', `/webhook-endpoints/${id}/recover`, {
          since,
        });
        firstAnsweredAt ??= Date.now();
        return answer;
      });
      proxy.slow(0);
      // The fault landed: the first recover was still at work when the store paused. A run whose
      // pause came after it fails here rather than passing without its fault.
      expect({ firstAnsweredAfterThePause: (firstAnsweredAt ?? 0) > pausedAt }).toEqual({
        firstAnsweredAfterThePause: true,
      });
      expect(answers.at(-1)?.status).toBe(202);
      for (const answer of answers) expect([202, 429, 503]).toContain(answer.status);

      // A delivery the pause failed comes back after the queue's visibility timeout (3 min).
      await eventually(() => hooks.accepted().size === plants, 240_000);
      await eventually(
        async () => (await pendingClaims(id, `${api.tableName}-webhook-log`)) === 0,
        30_000,
      );
      // Once each: no event reached the receiver twice.
      expect(hooks.deliveries.filter((delivery) => delivery.answered === 'ok')).toHaveLength(
        plants,
      );
    }, 330_000);
  }
});
