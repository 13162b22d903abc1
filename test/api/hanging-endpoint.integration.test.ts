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

it('delivers to the live endpoints as fast with one that hangs as without it, once it is failing', async () => {
  const live: WebhookReceiver[] = [];
  for (let index = 0; index < 5; index += 1) {
    const receiver = await bed.receiver();
    await bed.register('hang-owner', receiver, { events: ['plant.created'] });
    live.push(receiver);
  }
  const plants = 40;
  let next = 1;
  /** How long `plants` new plants take to reach every live endpoint. */
  const deliveredIn = async () => {
    const startedAt = Date.now();
    const first = next;
    for (; next < first + plants; next += 1) await bed.createPlant(next);
    for (const receiver of live) await receiver.waitForAccepted(next - 1);
    return Date.now() - startedAt;
  };
  const without = await deliveredIn();

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

  const withHanging = await deliveredIn();
  // Held behind it, 40 events to six endpoints are 24 batches of ten, each waiting its 3 s, two
  // at a time: about 36 s. Sidelined, as without it: the bound, twice and 2 s.
  expect({ without, withHanging, within: withHanging <= 2 * without + 2_000 }).toEqual({
    without,
    withHanging,
    within: true,
  });
}, 240_000);
