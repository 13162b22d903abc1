/**
 * `npm run bench:retries`: the dead-subscriber simulations on the emulated deployed path (moto's
 * SQS, DynamoDB Local, the delivery handler behind Lambda's mappings), time-compressed: a dead
 * subscriber with pending events beside a live one, then a dead endpoint among 1,000. What they
 * show: the live subscriber's delay beside the dead one, the messages in flight staying bounded,
 * and no retry early. About 15 minutes (`--quick`: about 2); writes `.data/bench/retries.json`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startMotoServer } from '../beds/moto-server.ts';
import { startDynamoDbLocal } from '../local/dynamodb-local.ts';
import { repositoryRoot } from './bundles.ts';
import { type Check, verdict } from './report.ts';
import {
  type RetrySimulationFigures,
  type RetrySimulationOptions,
  simulateDeadSubscriber,
} from './retry-simulation.ts';
import { round } from './statistics.ts';

const quick = process.argv.includes('--quick');
const pendingEvents = quick ? 40 : 200;
/**
 * Every event is a message for each endpoint, and moto's SQS with four pollers delivers them
 * slowly (docs/performance.md): one pending and one live event at 1,000 endpoints.
 */
const endpointRetryEvents = quick
  ? { endpoints: 100, pending: 1, live: 2 }
  : { endpoints: 1_000, pending: 1, live: 1 };

async function main(): Promise<void> {
  const dataDirectory = join(repositoryRoot, '.data', 'bench');
  mkdirSync(dataDirectory, { recursive: true });
  console.error(
    `A dead subscriber with ${pendingEvents} pending events beside a live one, time-compressed…`,
  );
  const retries = await measureDeadSubscriber({ pending: pendingEvents, live: 100 });
  console.error(
    `A dead endpoint among ${endpointRetryEvents.endpoints.toLocaleString('en-US')} with ${endpointRetryEvents.pending} pending events beside the live subscriber, then ${endpointRetryEvents.live} live events…`,
  );
  const endpointRetries = await measureDeadSubscriber({
    ...endpointRetryEvents,
    intervalMilliseconds: 1000,
  });
  const results = { quick, date: new Date().toISOString(), retries, endpointRetries };
  const resultsPath = join(dataDirectory, 'retries.json');
  writeFileSync(resultsPath, `${JSON.stringify(results, null, 2)}\n`);
  const check = verdict(quick);
  console.log(
    [
      ...formatRetrySimulation(retries, check),
      ...formatRetrySimulation(endpointRetries, check),
    ].join('\n'),
  );
  console.error(`Results: ${resultsPath}`);
}

/** The dead-subscriber simulation, on its own moto servers and DynamoDB Local. */
async function measureDeadSubscriber(
  events: Pick<RetrySimulationOptions, 'pending' | 'live' | 'endpoints' | 'intervalMilliseconds'>,
) {
  const [moto, retryMoto, store] = await Promise.all([
    startMotoServer(),
    startMotoServer(),
    startDynamoDbLocal(),
  ]);
  try {
    return await simulateDeadSubscriber({
      moto,
      retryMoto,
      dynamoDbUrl: store.url,
      intervalMilliseconds: 50,
      ...events,
    });
  } finally {
    await Promise.all([moto.stop(), retryMoto.stop(), store.stop()]);
  }
}

function formatRetrySimulation(figures: RetrySimulationFigures, check: Check): string[] {
  const { withoutDeadSubscriber: alone, withDeadSubscriber: dead } = figures;
  const total = figures.pending + figures.live;
  return [
    '',
    `Webhook retries (emulated deployed path, schedule ${figures.retrySchedule.join(', ')} s, hops ≤ ${figures.maximumDelaySeconds} s): ${figures.endpoints === 0 ? 'a dead subscriber' : `a dead endpoint among ${figures.endpoints.toLocaleString('en-US')} (the others healthy, in both runs)`} with ${figures.pending} pending events, then ${figures.live} live events`,
    `  live subscriber delay without the dead one: p50 ${alone.liveDelay.p50} ms, p99 ${alone.liveDelay.p99} ms; beside it: p50 ${dead.liveDelay.p50} ms, p99 ${dead.liveDelay.p99} ms (p99 ratio ${round(dead.liveDelay.p99 / alone.liveDelay.p99, 2)})`,
    `  messages in flight, at most: ${dead.maxInFlight} (the pollers' batches hold ${dead.inFlightBound}; the dead subscriber had ${total} events waiting) ${check(dead.maxInFlight <= dead.inFlightBound)}`,
    `  retries after their scheduled wait: min +${dead.retryLateness?.min} ms, p50 +${dead.retryLateness?.p50} ms, p99 +${dead.retryLateness?.p99} ms, max +${dead.retryLateness?.max} ms ${check((dead.retryLateness?.min ?? -1) >= 0)}`,
    `  every event delivered to the live subscriber: ${dead.liveDelivered}/${total} ${check(dead.liveDelivered === total)}; dead-lettered for the dead one: ${dead.deadLettered}/${total} ${check(dead.deadLettered === total)}`,
  ];
}

await main();
