/**
 * One webhook endpoint that hangs among live ones, under the local API's delivery pollers (as
 * few as the deployed mapping's are, against the traffic): once its first attempt has failed,
 * its first attempts are sidelined to the retry queue, so the live endpoints' deliveries are not
 * held behind its timeouts.
 *
 * @services dynamodb-local
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { WebhookReceiver } from '../../beds/webhook-receiver.ts';
import { type EndpointBed, eventually, startEndpointBed } from './endpoint-bed.ts';

let bed: EndpointBed;
beforeAll(async () => {
  // Each attempt at the hanging endpoint takes the whole 3 s timeout; its retries come later.
  bed = await startEndpointBed({ timeoutMilliseconds: 3_000, retrySchedule: [60, 60] });
}, 120_000);
afterAll(async () => {
  await bed?.stop();
}, 120_000);

it('delivers to 40 live endpoints as fast with one that hangs as without it, once it is failing', async () => {
  const live: WebhookReceiver[] = [];
  for (let index = 0; index < 40; index += 1) {
    const receiver = await bed.receiver();
    await bed.register('hang-owner', receiver, { events: ['plant.created'] });
    live.push(receiver);
  }
  const createdAt = new Map<number, number>();
  let next = 1;
  /** The live endpoints' first-attempt delays of `plants` new plants: their p99, in ms. */
  const delayP99 = async (plants = 100) => {
    const first = next;
    for (; next < first + plants; next += 1) {
      createdAt.set(next, Date.now());
      await bed.createPlant(next);
    }
    for (const receiver of live) await receiver.waitForAccepted(next - 1, 240_000);
    // Each delivery's first arrival (SQS may hand a message out twice).
    const firsts = live.flatMap((receiver) => [
      ...new Map(receiver.deliveries.toReversed().map((each) => [each.webhookId, each])).values(),
    ]);
    const delays = firsts
      .map((delivery) => ({
        id: Number(JSON.parse(delivery.body).data.id),
        at: delivery.receivedAt,
      }))
      .filter(({ id }) => id >= first)
      .map(({ id, at }) => at - (createdAt.get(id) as number))
      .sort((a, b) => a - b);
    expect(delays).toHaveLength(live.length * plants);
    return delays[Math.ceil(delays.length * 0.99) - 1] as number;
  };
  // A first round warms the store, the pollers and the connections.
  await delayP99(20);
  const without = await delayP99();

  const hanging = await bed.receiver();
  hanging.setMode('hang');
  const { id: hangingId } = await bed.register('hang-owner', hanging, {
    events: ['plant.created'],
  });
  // Its first attempt fails (its timeout): from then on it is failing.
  await bed.createPlant(next);
  next += 1;
  for (const receiver of live) await receiver.waitForAccepted(next - 1);
  await eventually(async () => {
    const path = `/webhook-endpoints/${hangingId}/attempts`;
    return (await bed.request('hang-owner', 'GET', path)).body.length > 0;
  }, 30_000);

  const withHanging = await delayP99();
  // Held behind it, every batch holding one of its deliveries waits its 3 s. Sidelined, as
  // without it: the bound of twice and 2 s.
  expect({ without, withHanging, within: withHanging <= 2 * without + 2_000 }).toEqual({
    without,
    withHanging,
    within: true,
  });
}, 600_000);
