/**
 * One dead subscriber beside a live one on the emulated deployed path (`bench/retry-simulation.ts`,
 * which `npm run bench` runs larger): the live subscriber keeps getting every event promptly,
 * the messages in flight stay bounded by the pollers' batches whatever the dead one's backlog,
 * every retry comes on schedule, and every event ends delivered or dead-lettered.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { simulateDeadSubscriber } from '../../bench/retry-simulation.ts';
import { type MotoServer, startMotoServer } from '../support/moto-server.ts';

let moto: MotoServer;

beforeAll(async () => {
  moto = await startMotoServer();
}, 60_000);

afterAll(async () => {
  await moto?.stop();
});

it('keeps a live subscriber on time, and the queue’s in-flight messages bounded, while another is dead', async () => {
  const pending = 40;
  const live = 40;
  const figures = await simulateDeadSubscriber({ moto, pending, live, intervalMilliseconds: 50 });
  const { withDeadSubscriber: dead, withoutDeadSubscriber: alone } = figures;
  console.info(JSON.stringify(figures));
  expect(alone.liveDelivered).toBe(pending + live);
  expect(dead.liveDelivered).toBe(pending + live);
  expect(dead.deadLettered).toBe(pending + live);
  // Two delivery and four retry pollers of ten: never more in flight, whatever is waiting.
  expect(dead.maxInFlight).toBeLessThanOrEqual(60);
  // Every retry came after its wait, and within SQS's whole-second delays and a poll of it.
  expect(dead.retryLateness?.p50).toBeGreaterThanOrEqual(0);
  expect(dead.retryLateness?.max).toBeLessThan(4_000);
  // Not stalled: the live subscriber's worst delay stays within seconds on the same emulator
  // and machine that also serve the dead subscriber's retries (the bench reports the ratio).
  expect(dead.liveDelay.p99).toBeLessThan(Math.max(5 * alone.liveDelay.p99, 5_000));
}, 300_000);
