/**
 * One dead subscriber beside a live one on the emulated deployed path (`bench/retry-simulation.ts`,
 * which `npm run bench` runs larger): the live subscriber keeps getting every event promptly,
 * the messages in flight stay bounded by the pollers' batches whatever the dead one's backlog,
 * every retry comes on schedule, and every event ends delivered or dead-lettered.
 *
 * @services dynamodb-local
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { type MotoServer, startMotoServer } from '../../beds/moto-server.ts';
import { simulateDeadSubscriber } from '../../bench/retry-simulation.ts';
import { testStoreUrl } from '../support/test-store.ts';

let moto: MotoServer;
let retryMoto: MotoServer;

beforeAll(async () => {
  [moto, retryMoto] = await Promise.all([startMotoServer(), startMotoServer()]);
}, 180_000);

afterAll(async () => {
  await Promise.all([moto?.stop(), retryMoto?.stop()]);
});

it('keeps a live subscriber on time, and the queue’s in-flight messages bounded, while another is dead', async () => {
  const pending = 40;
  const live = 40;
  const figures = await simulateDeadSubscriber({
    moto,
    retryMoto,
    dynamoDbUrl: testStoreUrl(),
    pending,
    live,
    intervalMilliseconds: 50,
  });
  const { withDeadSubscriber: dead, withoutDeadSubscriber: alone } = figures;
  console.info(JSON.stringify(figures));
  expect(alone.liveDelivered).toBe(pending + live);
  expect(dead.liveDelivered).toBe(pending + live);
  expect(dead.deadLettered).toBe(pending + live);
  // Only what the pollers hold (8 of ten) is ever in flight, whatever is waiting.
  expect(dead.inFlightBound).toBe(80);
  expect(dead.maxInFlight).toBeLessThanOrEqual(dead.inFlightBound);
  // The schedule's tolerance: no retry before its wait (a hop is never early), and 99 % within
  // 4 s after it: SQS's whole-second delays, a poll, and this busy emulator.
  expect(dead.retryLateness?.min).toBeGreaterThanOrEqual(0);
  expect(dead.retryLateness?.p99).toBeLessThan(4_000);
  // No live message waited out the queue's visibility timeout (180 s) in either run: received
  // and then not deleted, it would be held for minutes whatever the dead subscriber did, and in
  // the run alone it would also widen the bound below.
  expect(alone.liveDelay.max).toBeLessThan(60_000);
  expect(dead.liveDelay.max).toBeLessThan(60_000);
  // The live subscriber is not held up: its delay stays that of a run without the dead one,
  // within what sharing two cores with the dead one's retries costs (the bench reports both),
  // and no live event waits as long as the dead one's first retry does (held behind it, it would).
  const firstRetryMilliseconds = (figures.retrySchedule[0] as number) * 1000;
  expect(dead.liveDelay.p50).toBeLessThan(Math.max(4 * alone.liveDelay.p50, 500));
  expect(dead.liveDelay.p99).toBeLessThan(
    Math.max(4 * alone.liveDelay.p99, firstRetryMilliseconds),
  );
}, 300_000);
