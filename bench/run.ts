/**
 * `npm run bench`: what the Plant Store's functions cost, as figures (never pass/fail timings).
 * Builds the bundles as the CDK app does, then measures each API function's cold start (against
 * its CDK-default build and the SDK's floor), the create function's every bundling lever and warm
 * path, the authorizer, the local API end to end under load, and the webhooks; writes everything
 * to `.data/bench/results.json` and prints the report (`report.ts`). `--quick` takes fewer
 * samples (a smoke run whose verdicts are marked indicative only).
 *
 * Every server and process a section starts is stopped when it ends, also when it fails.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { startMotoServer } from '../beds/moto-server.ts';
import { functionDisplayName } from '../functions/shared/http/routes.ts';
import { startDynamoDbLocal } from '../local/dynamodb-local.ts';
import {
  estimateLambdaTimes,
  measureApiFunctions,
  measureAuthorizer,
  type Sampling,
} from './api-functions.ts';
import { buildBenchBundles, createFunctionName, repositoryRoot } from './bundles.ts';
import { measureEndToEnd } from './end-to-end.ts';
import { type BenchResults, formatLoad, formatReport } from './report.ts';
import { type RetrySimulationOptions, simulateDeadSubscriber } from './retry-simulation.ts';
import { round } from './statistics.ts';
import { measureWebhookEndpoints } from './webhook-endpoints.ts';
import { measureWebhookLoad } from './webhooks.ts';

const quick = process.argv.includes('--quick');
const sampling: Sampling = {
  coldStartRuns: quick ? 5 : 31,
  // Long and many enough that one noisy second cannot move the median ratio (the spread printed
  // with each ratio shows how much the rounds disagreed).
  warmRounds: quick ? 1 : 15,
  warmRoundMilliseconds: quick ? 500 : 1000,
  authorizerMilliseconds: quick ? 500 : 2000,
};
const endToEndSeconds = quick ? 2 : 10;
const listedPlants = quick ? 1_000 : 10_000;
const pendingEvents = quick ? 40 : 200;
/** DESIGN.md's scale: one event to 1,000 endpoints. */
const fannedOutEndpoints = 1_000;
const fannedOutEvents = quick ? 2 : 5;
/**
 * Every event is a message for each endpoint, and moto's SQS with four pollers delivers about 14
 * a second here: one pending and one live event at 1,000 endpoints take about 8 minutes.
 */
const endpointRetryEvents = quick
  ? { endpoints: 100, pending: 1, live: 2 }
  : { endpoints: fannedOutEndpoints, pending: 1, live: 1 };

const dataDirectory = join(repositoryRoot, '.data', 'bench');
const resultsPath = join(dataDirectory, 'results.json');

async function main(): Promise<void> {
  mkdirSync(dataDirectory, { recursive: true });
  const loadBefore = loadavg();
  const started = performance.now();
  log(`Plant Store benchmark${quick ? ' (quick)' : ''}; load average ${formatLoad(loadBefore)}`);

  log('Building the bundles…');
  const bundles = await buildBenchBundles(join(dataDirectory, 'bundles'));

  log(
    `API functions: cold starts (${sampling.coldStartRuns} fresh processes per build; every lever of ${createFunctionName}), warm paths; ${bundles.otherApiFunctions.map(({ name }) => functionDisplayName(name)).join(', ')} against their CDK defaults…`,
  );
  const apiFunctions = await measureApiFunctions(bundles, sampling, dataDirectory);

  log('Authorizer…');
  const authorizer = await measureAuthorizer(bundles, sampling, dataDirectory);

  log(
    `Local API end to end (${endToEndSeconds} s each of creates, reads, changes, then GET /plants?limit=100 over ${listedPlants} plants; DynamoDB Local)…`,
  );
  const endToEnd = await measureEndToEnd({ durationSeconds: endToEndSeconds, listedPlants });

  log('Webhooks: 1,000 creates from 20 clients without, then with, a live receiver (twice)…');
  const webhooks = await measureWebhookLoad({ runs: quick ? 1 : 2 });

  log(
    `Webhook retries on the emulated deployed path (moto, DynamoDB Local): a dead subscriber with ${pendingEvents} pending events beside a live one, time-compressed…`,
  );
  const retries = await measureDeadSubscriber({ pending: pendingEvents, live: 100 });

  log(
    `Webhook retries with endpoints: a dead endpoint among ${endpointRetryEvents.endpoints.toLocaleString('en-US')} with ${endpointRetryEvents.pending} pending events beside the live subscriber, then ${endpointRetryEvents.live} live events…`,
  );
  const endpointRetries = await measureDeadSubscriber({
    ...endpointRetryEvents,
    intervalMilliseconds: 1000,
  });

  log(
    `Webhook endpoints: ${fannedOutEndpoints.toLocaleString('en-US')} registered through the local API, then ${fannedOutEvents} events each fanned out to all of them (moto's SQS, DynamoDB Local)…`,
  );
  const endpoints = await measureEndpoints();

  const results: BenchResults = {
    quick,
    machine: describeMachine(loadBefore, loadavg()),
    durationSeconds: round((performance.now() - started) / 1000),
    bundles: {
      createBytes: bundles.create.bytes,
      createCdkDefaultBytes:
        bundles.createVariants.find((bundle) => bundle.name === 'cdk-default')?.bytes ?? 0,
      authorizerBytes: bundles.authorizer.bytes,
    },
    apiFunctions,
    authorizer,
    endToEnd,
    webhooks,
    retries,
    endpointRetries,
    endpoints,
    memoryEstimates: estimateLambdaTimes(
      apiFunctions.create.figures,
      apiFunctions.create.warmPath.figures,
    ),
  };
  writeFileSync(resultsPath, `${JSON.stringify(results, null, 2)}\n`);
  console.log(formatReport(results).join('\n'));
  log(`Results: ${resultsPath}`);
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
      dynamoDbEndpoint: store.endpoint,
      intervalMilliseconds: 50,
      ...events,
    });
  } finally {
    await Promise.all([moto.stop(), retryMoto.stop(), store.stop()]);
  }
}

/** Endpoint registration and the fan-out to 1,000 endpoints, on their own moto and store. */
async function measureEndpoints() {
  const [moto, store] = await Promise.all([startMotoServer(), startDynamoDbLocal()]);
  try {
    return await measureWebhookEndpoints({
      moto,
      dynamoDbEndpoint: store.endpoint,
      endpoints: fannedOutEndpoints,
      events: fannedOutEvents,
    });
  } finally {
    await Promise.all([moto.stop(), store.stop()]);
  }
}

function describeMachine(loadBefore: number[], loadAfter: number[]) {
  const [cpu] = cpus();
  return {
    cpuModel: cpu?.model.trim() ?? 'unknown',
    cores: cpus().length,
    memoryGiB: round(totalmem() / 2 ** 30),
    node: process.version,
    kernel: release(),
    date: new Date().toISOString(),
    loadAverageBefore: loadBefore.map((value) => round(value, 2)),
    loadAverageAfter: loadAfter.map((value) => round(value, 2)),
  };
}

function log(message: string): void {
  console.error(message);
}

await main();
