/**
 * `npm run bench`: the figures that decide things (never pass/fail timings): each function's cold
 * start against its CDK-default build and the SDK's floor, the create function's bundling levers
 * and warm path, the authorizer, the local API under load, the webhook delay, the fan-out to
 * 1,000 endpoints and a delivery's CPU, written to `.data/bench/results.json` and reported
 * (`report.ts`). `--quick` takes fewer samples; `--steady-processes N` sets the processes a build
 * in tracing's steady state; `npm run bench:retries` and `npm run cost` are apart. Every server a
 * section starts is stopped when it ends, also when it fails.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
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
import { measureDeliveryCpu } from './delivery-cpu.ts';
import { measureEndToEnd } from './end-to-end.ts';
import { type BenchResults, formatLoad, formatReport } from './report.ts';
import { round } from './statistics.ts';
import { measureWebhookEndpoints } from './webhook-endpoints.ts';
import { measureWebhookLoad } from './webhooks.ts';

const { values: flags } = parseArgs({
  options: { quick: { type: 'boolean' }, 'steady-processes': { type: 'string' } },
});
const quick = flags.quick === true;
const sampling: Sampling = {
  coldStartRuns: quick ? 5 : 31,
  // Long and many enough that one noisy second cannot move the median ratio (the spread printed
  // with each ratio shows how much the rounds disagreed).
  warmRounds: quick ? 1 : 15,
  warmRoundMilliseconds: quick ? 500 : 1000,
  // Eight processes a build (`--steady-processes N`): a build's own processes differ by a few per
  // cent, and with three the control came out up to 3 % from itself, with eight within 1 %. A
  // quarter second each a block; an odd count of blocks, so that the median ratio is the middle one.
  steadyProcesses: Number(flags['steady-processes'] ?? (quick ? 1 : 8)),
  steadyBlocks: quick ? 5 : 41,
  steadyInvocationsPerBlock: quick ? 200 : 500,
  authorizerMilliseconds: quick ? 500 : 2000,
};
if (!Number.isInteger(sampling.steadyProcesses) || sampling.steadyProcesses < 1) {
  throw new Error('--steady-processes takes a whole number, 1 or more.');
}
const endToEndSeconds = quick ? 2 : 10;
const listedPlants = quick ? 1_000 : 10_000;
/** Endpoints at the medium size of `npm run capacity`: an event, and a stream batch, to 2,000. */
const fannedOutEndpoints = 2_000;
const fannedOutEvents = quick ? 2 : 5;
const fannedOutBatches = quick ? 1 : 5;

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
    `Webhook endpoints: ${fannedOutEndpoints.toLocaleString('en-US')} registered through the local API, then ${fannedOutEvents} events each fanned out to all of them (moto's SQS, DynamoDB Local)…`,
  );
  const endpoints = await measureEndpoints();

  log("Webhook deliveries: the delivery function's CPU a delivery (DynamoDB Local)…");
  const deliveries = await measureDeliveries();

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
    endpoints,
    deliveries,
    memoryEstimates: estimateLambdaTimes(
      apiFunctions.create.figures,
      apiFunctions.create.warmPath.figures,
    ),
  };
  writeFileSync(resultsPath, `${JSON.stringify(results, null, 2)}\n`);
  console.log(formatReport(results).join('\n'));
  log(`Results: ${resultsPath}`);
}

/** Endpoint registration and the fan-out to 2,000 endpoints, on their own moto and store. */
async function measureEndpoints() {
  const [moto, store] = await Promise.all([startMotoServer(), startDynamoDbLocal()]);
  try {
    return await measureWebhookEndpoints({
      moto,
      dynamoDbUrl: store.url,
      endpoints: fannedOutEndpoints,
      events: fannedOutEvents,
      batches: fannedOutBatches,
    });
  } finally {
    await Promise.all([moto.stop(), store.stop()]);
  }
}

/** The delivery function's CPU, on a store of its own. */
async function measureDeliveries() {
  const store = await startDynamoDbLocal();
  try {
    return await measureDeliveryCpu({ dynamoDbUrl: store.url, rounds: quick ? 2 : 7 });
  } finally {
    await store.stop();
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
