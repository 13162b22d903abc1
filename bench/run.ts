/**
 * `npm run bench`: what the Plant Store's functions cost, as figures (never pass/fail timings).
 * Builds the bundles as the CDK app does, then measures bundle sizes, create-plant's cold start
 * (against the CDK-default build and a bare Node.js), its warm path (against a bare handler and a
 * raw HTTP put), the authorizer, and the local API end to end under load. Prints tables and
 * writes everything to `.data/bench/results.json`. `--quick` takes fewer samples (a smoke run
 * whose verdicts are marked indicative only). Every ratio is printed with its spread.
 *
 * Every server and process a section starts is stopped when it ends, also when it fails.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { functionDisplayName, routesOf } from '../functions/shared/routes.ts';
import { functionSettings } from '../infra/function-settings.ts';
import { startMotoServer } from '../local/aws-emulation/moto-server.ts';
import { startDynamoDbLocal } from '../local/dynamodb-local.ts';
import { benchMethodArn, benchmarkAuthorizer, startAuthorizerFixture } from './authorizer.ts';
import {
  type BenchBundles,
  buildBenchBundles,
  type OtherApiFunction,
  repositoryRoot,
} from './bundles.ts';
import {
  type ColdStartFigures,
  type ColdStartSubject,
  createLambdaEnvironment,
  measureColdStarts,
} from './cold-start.ts';
import { measureEndToEnd } from './end-to-end.ts';
import { startInstantDynamoDb } from './instant-dynamodb.ts';
import { type RetrySimulationFigures, simulateDeadSubscriber } from './retry-simulation.ts';
import { round } from './statistics.ts';
import { measureWarmPath, median } from './warm-path.ts';
import { measureWebhookLoad } from './webhooks.ts';

const quick = process.argv.includes('--quick');
const coldStartRuns = quick ? 5 : 31;
// Long and many enough that one noisy second cannot move the median ratio (the spread printed
// with each ratio shows how much the rounds disagreed).
const warmRounds = quick ? 1 : 15;
const warmRoundMilliseconds = quick ? 500 : 1000;
const endToEndSeconds = quick ? 2 : 10;
const listedPlants = quick ? 1_000 : 10_000;

const dataDirectory = join(repositoryRoot, '.data', 'bench');
const resultsPath = join(dataDirectory, 'results.json');
const sampleEventPath = join(repositoryRoot, 'events', 'create-plant.json');
/**
 * The SDK's floor: the bare handler (one DocumentClient put, nothing else) built as deployed.
 * No function whose every answer needs the store can start faster than its client, so this is
 * the lowest cold start any build of a Plant Store function can reach; each function's
 * CDK-default build is set against it in the same interleaved runs.
 */
const sdkFloorEventPath = join(dataDirectory, 'sdk-floor-event.json');

/** The sample create with a small id: the bare handler reads ids as plain numbers. */
function writeSdkFloorEvent(): void {
  const event = JSON.parse(readFileSync(sampleEventPath, 'utf8'));
  event.body = event.body.replace(/"id":\d+/, '"id":7');
  writeFileSync(sdkFloorEventPath, JSON.stringify(event));
}

/**
 * The sample event of each other API function (`events/<function>.json`, as `sam local invoke`
 * takes it), and what it answers against the instant store: 204 for a DELETE, 200 otherwise.
 */
function otherFunctionEvent(name: OtherApiFunction): { eventPath: string; outcome: string } {
  const deletes = routesOf(name).every((route) => route.method === 'DELETE');
  return {
    eventPath: join(repositoryRoot, 'events', `${functionDisplayName(name)}.json`),
    outcome: deletes ? '204' : '200',
  };
}

/** The issue's targets, checked against the figures in the summary. */
const targets = {
  createPlantBundleKiB: 200,
  authorizerBundleKiB: 60,
  coldStartRatioToCdkDefault: 0.6,
  warmRatioToBareHandler: 0.85,
  otherBundleKiB: 200,
  otherColdStartRatioToCdkDefault: 0.65,
  /** Issue 17's bar for the function it added. */
  updatePlantColdStartRatioToCdkDefault: 0.5,
  listPageP99ToCreateP99: 3,
  webhookDeliveryP99Milliseconds: 2000,
};

/** Lambda gives a function one full vCPU at 1769 MB and a proportional share below. */
const fullVcpuMemoryMb = 1769;
const memoryChoicesMb = [256, 512, 1024, 1769];

async function main(): Promise<void> {
  mkdirSync(dataDirectory, { recursive: true });
  writeSdkFloorEvent();
  const loadBefore = loadavg();
  const started = performance.now();
  log(`Plant Store benchmark${quick ? ' (quick)' : ''}; load average ${formatLoad(loadBefore)}`);

  log('Building the bundles…');
  const bundles = await buildBenchBundles(join(dataDirectory, 'bundles'));

  log(`create-plant cold starts (${coldStartRuns} fresh processes per build)…`);
  const coldStart = await measureCreatePlantColdStart(bundles);

  log(`Warm path (${warmRounds} rounds of ${warmRoundMilliseconds} ms per handler)…`);
  const warmPath = await measureCreatePlantWarmPath(bundles);

  log(
    `${bundles.otherApiFunctions.map(({ name }) => functionDisplayName(name)).join(', ')}: cold starts and warm path…`,
  );
  const otherFunctions = await measureOtherApiFunctions(bundles);

  log('Authorizer…');
  const authorizer = await measureAuthorizer(bundles);

  log(
    `Local API end to end (${endToEndSeconds} s each of creates, reads, changes, then GET /plants?limit=100 over ${listedPlants} plants; DynamoDB Local)…`,
  );
  const endToEnd = await measureEndToEnd({ durationSeconds: endToEndSeconds, listedPlants });

  log('Webhooks: 1,000 creates from 20 clients without, then with, a live receiver (twice)…');
  const webhooks = await measureWebhookLoad({ runs: quick ? 1 : 2 });

  const pending = quick ? 40 : 200;
  log(
    `Webhook retries on the emulated deployed path (moto, DynamoDB Local): a dead subscriber with ${pending} pending events beside a live one, time-compressed…`,
  );
  const retries = await measureDeadSubscriber(pending);

  const results = {
    machine: describeMachine(loadBefore, loadavg()),
    durationSeconds: round((performance.now() - started) / 1000),
    targets,
    bundles: {
      createPlantBytes: bundles.createPlant.bytes,
      authorizerBytes: bundles.authorizer.bytes,
      createPlantCdkDefaultBytes: bundleBytes(bundles, 'create-plant-cdk-default'),
      authorizerCdkDefaultBytes: bundles.authorizerCdkDefault.bytes,
      createPlantVariantsBytes: Object.fromEntries(
        bundles.createPlantVariants.map((bundle) => [bundle.name, bundle.bytes]),
      ),
    },
    createPlantColdStart: coldStart,
    warmPath,
    otherFunctions,
    authorizer,
    endToEnd,
    webhooks,
    retries,
    memoryEstimates: estimateLambdaTimes(coldStart.figures, warmPath.figures),
  };
  writeFileSync(resultsPath, `${JSON.stringify(results, null, 2)}\n`);
  printSummary(results);
  log(`Results: ${resultsPath}`);
}

/** The dead-subscriber simulation, on its own moto server and DynamoDB Local. */
async function measureDeadSubscriber(pending: number) {
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
      pending,
      live: 100,
      intervalMilliseconds: 50,
    });
  } finally {
    await Promise.all([moto.stop(), retryMoto.stop(), store.stop()]);
  }
}

async function measureCreatePlantColdStart(bundles: BenchBundles) {
  const store = await startInstantDynamoDb();
  const compileCacheDirectory = mkdtempSync(join(tmpdir(), 'plant-store-compile-cache-'));
  try {
    const environment = createLambdaEnvironment(
      'create-plant',
      functionSettings.createPlant.memorySizeMb,
      { TABLE_NAME: 'plants', DYNAMODB_ENDPOINT: store.endpoint },
    );
    const create = (name: string, bundlePath: string, extra: Record<string, string> = {}) =>
      ({
        name,
        bundlePath,
        eventPath: sampleEventPath,
        environment: { ...environment, ...extra },
        expectedOutcome: '200',
      }) satisfies ColdStartSubject;
    const subjects: ColdStartSubject[] = [
      { name: 'bare-node', environment },
      create('deployed', bundles.createPlant.path),
      { ...create('sdk-floor', bundles.bareCreate.path), eventPath: sdkFloorEventPath },
      ...bundles.createPlantVariants.map((bundle) =>
        create(bundle.name.replace('create-plant-', ''), bundle.path),
      ),
      // Not deployable as is (a new Lambda instance starts with an empty cache): shows what
      // V8's code cache would still save.
      create('deployed+compile-cache', bundles.createPlant.path, {
        NODE_COMPILE_CACHE: compileCacheDirectory,
      }),
    ];
    const figures = await measureColdStarts(subjects, coldStartRuns);
    const deployed = figures.deployed?.total.median ?? Number.NaN;
    const cdkDefault = figures['cdk-default']?.total.median ?? Number.NaN;
    const bare = figures['bare-node']?.total.median ?? Number.NaN;
    return {
      runs: coldStartRuns,
      figures,
      ratioToCdkDefault: round(deployed / cdkDefault, 2),
      sdkFloorRatioToCdkDefault: round(
        (figures['sdk-floor']?.total.median ?? Number.NaN) / cdkDefault,
        2,
      ),
      // Without Node.js's own start, which no bundle can change.
      ratioToCdkDefaultAboveBareNode: round((deployed - bare) / (cdkDefault - bare), 2),
      storeRequests: store.requestCount,
    };
  } finally {
    await store.close();
    rmSync(compileCacheDirectory, { recursive: true, force: true });
  }
}

async function measureCreatePlantWarmPath(bundles: BenchBundles) {
  const store = await startInstantDynamoDb();
  try {
    const environment = createLambdaEnvironment(
      'create-plant',
      functionSettings.createPlant.memorySizeMb,
      { TABLE_NAME: 'plants', DYNAMODB_ENDPOINT: store.endpoint },
    );
    const figures = await measureWarmPath(
      [
        { name: 'create-plant', bundlePath: bundles.createPlant.path, environment },
        { name: 'bare-handler', bundlePath: bundles.bareCreate.path, environment },
        { name: 'raw-http-put', bundlePath: 'raw-http', environment },
        {
          name: 'bare, client per invocation',
          bundlePath: bundles.bareCreate.path,
          environment: { ...environment, BENCH_CLIENT_PER_INVOCATION: '1' },
        },
      ],
      {
        eventPath: sampleEventPath,
        storeEndpoint: store.endpoint,
        rounds: warmRounds,
        roundMilliseconds: warmRoundMilliseconds,
      },
    );
    // Round by round, each create-plant round against the bare round right after it: load from
    // elsewhere changes between rounds far more than within a pair.
    const createPlantRounds = figures['create-plant']?.requestsPerSecondByRound ?? [];
    const bareRounds = figures['bare-handler']?.requestsPerSecondByRound ?? [];
    const roundRatios = createPlantRounds.map(
      (value, index) => value / (bareRounds[index] ?? Number.NaN),
    );
    return {
      figures,
      ratioToBareHandler: round(median(roundRatios), 2),
      ratioSpread: spreadOf(roundRatios),
    };
  } finally {
    await store.close();
  }
}

/**
 * Each other API function as deployed against its CDK-default build: bundle size, cold start
 * (fresh processes, interleaved) and warm invocations per second, on its sample event.
 */
async function measureOtherApiFunctions(bundles: BenchBundles) {
  const store = await startInstantDynamoDb();
  try {
    const results = [];
    for (const { name, deployed, cdkDefault } of bundles.otherApiFunctions) {
      const { eventPath, outcome } = otherFunctionEvent(name);
      const environment = createLambdaEnvironment(name, functionSettings[name].memorySizeMb, {
        TABLE_NAME: 'plants',
        DYNAMODB_ENDPOINT: store.endpoint,
      });
      const subject = (label: string, bundlePath: string): ColdStartSubject => ({
        name: label,
        bundlePath,
        eventPath,
        environment,
        expectedOutcome: outcome,
      });
      const coldStart = await measureColdStarts(
        [
          { name: 'bare-node', environment },
          subject('deployed', deployed.path),
          subject('cdk-default', cdkDefault.path),
          {
            ...subject('sdk-floor', bundles.bareCreate.path),
            eventPath: sdkFloorEventPath,
            expectedOutcome: '200',
          },
        ],
        coldStartRuns,
      );
      const warm = await measureWarmPath(
        [{ name, bundlePath: deployed.path, environment, eventPath }],
        {
          eventPath,
          storeEndpoint: store.endpoint,
          rounds: Math.min(warmRounds, 5),
          roundMilliseconds: warmRoundMilliseconds,
        },
      );
      // Run by run: each deployed start against the CDK-default start right after it.
      const ratios = (coldStart.deployed?.totals ?? []).map(
        (value, index) => value / (coldStart['cdk-default']?.totals[index] ?? Number.NaN),
      );
      results.push({
        name,
        bundleBytes: deployed.bytes,
        cdkDefaultBundleBytes: cdkDefault.bytes,
        coldStart,
        coldStartRatioToCdkDefault: round(
          (coldStart.deployed?.total.median ?? Number.NaN) /
            (coldStart['cdk-default']?.total.median ?? Number.NaN),
          2,
        ),
        coldStartRatioSpread: spreadOf(ratios),
        sdkFloorRatioToCdkDefault: round(
          (coldStart['sdk-floor']?.total.median ?? Number.NaN) /
            (coldStart['cdk-default']?.total.median ?? Number.NaN),
          2,
        ),
        coldStartTarget:
          name === 'updatePlant'
            ? targets.updatePlantColdStartRatioToCdkDefault
            : targets.otherColdStartRatioToCdkDefault,
        warm: warm[name],
      });
    }
    return results;
  } finally {
    await store.close();
  }
}

/** The range of the middle half and the extremes of some ratios, rounded for printing. */
function spreadOf(values: readonly number[]) {
  const sorted = [...values].filter(Number.isFinite).sort((a, b) => a - b);
  const at = (fraction: number) =>
    round(sorted[Math.floor(fraction * (sorted.length - 1))] ?? Number.NaN, 2);
  return { min: at(0), p25: at(0.25), p75: at(0.75), max: at(1) };
}

async function measureAuthorizer(bundles: BenchBundles) {
  const fixture = await startAuthorizerFixture();
  try {
    const eventPath = join(dataDirectory, 'authorizer-event.json');
    writeFileSync(
      eventPath,
      JSON.stringify({
        type: 'TOKEN',
        methodArn: benchMethodArn,
        authorizationToken: `Bearer ${fixture.signToken('bench-client')}`,
      }),
    );
    const environment = createLambdaEnvironment(
      'authorizer',
      functionSettings.authorizer.memorySizeMb,
      fixture.environment,
    );
    const subject = (name: string, bundlePath: string): ColdStartSubject => ({
      name,
      bundlePath,
      eventPath,
      environment,
      expectedOutcome: 'Allow',
    });
    const coldStart = await measureColdStarts(
      [
        { name: 'bare-node', environment },
        subject('deployed', bundles.authorizer.path),
        subject('cdk-default', bundles.authorizerCdkDefault.path),
      ],
      coldStartRuns,
    );
    const { verificationsPerSecond } = await benchmarkAuthorizer({
      durationMilliseconds: quick ? 500 : 2000,
    });
    return { coldStart, verificationsPerSecond };
  } finally {
    await fixture.close();
  }
}

/**
 * Lambda time of the CPU-bound work at each memory size, from the CPU time measured here and
 * the vCPU share Lambda gives (one vCPU at 1769 MB). A Lambda vCPU is not this machine's core,
 * so these are estimates for comparing sizes, not predictions.
 */
function estimateLambdaTimes(
  coldStart: Record<string, ColdStartFigures>,
  warmPath: Record<string, { cpuMicrosecondsPerRequest: number }>,
) {
  const bareCpu = coldStart['bare-node']?.cpu.median ?? 0;
  // Node.js's own start is part of the platform's share of a cold start, not the function's.
  const coldCpuMilliseconds = (coldStart.deployed?.cpu.median ?? 0) - bareCpu;
  const warmCpuMilliseconds = (warmPath['create-plant']?.cpuMicrosecondsPerRequest ?? 0) / 1000;
  return memoryChoicesMb.map((memorySizeMb) => {
    const vcpuShare = Math.min(1, memorySizeMb / fullVcpuMemoryMb);
    return {
      memorySizeMb,
      vcpuShare: round(vcpuShare, 2),
      coldStartMilliseconds: round(coldCpuMilliseconds / vcpuShare),
      warmCpuMilliseconds: round(warmCpuMilliseconds / vcpuShare, 2),
    };
  });
}

function bundleBytes(bundles: BenchBundles, name: string): number {
  return bundles.createPlantVariants.find((bundle) => bundle.name === name)?.bytes ?? 0;
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

function printSummary(results: {
  machine: ReturnType<typeof describeMachine>;
  durationSeconds: number;
  bundles: {
    createPlantBytes: number;
    authorizerBytes: number;
    createPlantCdkDefaultBytes: number;
  };
  createPlantColdStart: Awaited<ReturnType<typeof measureCreatePlantColdStart>>;
  warmPath: Awaited<ReturnType<typeof measureCreatePlantWarmPath>>;
  otherFunctions: Awaited<ReturnType<typeof measureOtherApiFunctions>>;
  authorizer: Awaited<ReturnType<typeof measureAuthorizer>>;
  endToEnd: Awaited<ReturnType<typeof measureEndToEnd>>;
  webhooks: Awaited<ReturnType<typeof measureWebhookLoad>>;
  retries: RetrySimulationFigures;
  memoryEstimates: ReturnType<typeof estimateLambdaTimes>;
}): void {
  const { machine } = results;
  const lines: string[] = [];
  lines.push(
    '',
    `Machine: ${machine.cpuModel}, ${machine.cores} cores, Node.js ${machine.node}; load average ${formatLoad(machine.loadAverageBefore)} before, ${formatLoad(machine.loadAverageAfter)} after; ${results.durationSeconds} s`,
    '',
    'Bundles                              size  target',
    `  create-plant                  ${kib(results.bundles.createPlantBytes)}  ≤ ${targets.createPlantBundleKiB} KiB ${check(results.bundles.createPlantBytes <= targets.createPlantBundleKiB * 1024)}`,
    `  authorizer                    ${kib(results.bundles.authorizerBytes)}  ≤ ${targets.authorizerBundleKiB} KiB ${check(results.bundles.authorizerBytes <= targets.authorizerBundleKiB * 1024)}`,
    `  create-plant, CDK default     ${kib(results.bundles.createPlantCdkDefaultBytes)}  + the SDK from node_modules`,
  );
  const cold = results.createPlantColdStart;
  lines.push(
    '',
    `create-plant cold start, ms (median of ${cold.runs} fresh processes; spawn → first answer)`,
    ...formatColdStartTable(cold.figures),
    `  deployed / CDK default: ${cold.ratioToCdkDefault} (target ≤ ${targets.coldStartRatioToCdkDefault}) ${check(cold.ratioToCdkDefault <= targets.coldStartRatioToCdkDefault)}; above a bare Node.js: ${cold.ratioToCdkDefaultAboveBareNode}; the SDK's floor: ${cold.sdkFloorRatioToCdkDefault}`,
  );
  const warm = results.warmPath;
  lines.push(
    '',
    'Warm path (one thread, instant store)          creates/s   CPU µs/request',
    ...Object.entries(warm.figures).map(
      ([name, figures]) =>
        `  ${name.padEnd(44)} ${String(figures.requestsPerSecond).padStart(9)}   ${String(figures.cpuMicrosecondsPerRequest).padStart(14)}`,
    ),
    `  create-plant / bare handler: ${warm.ratioToBareHandler}, round by round ${formatSpread(warm.ratioSpread)} (target ≥ ${targets.warmRatioToBareHandler}) ${check(warm.ratioToBareHandler >= targets.warmRatioToBareHandler)}`,
  );
  lines.push(
    '',
    'Other API functions (cold start: median of fresh processes, ms; warm: one thread, instant store)',
    `  ${'function'.padEnd(14)} ${'bundle'.padStart(10)} ${'CDK default'.padStart(11)} ${'cold'.padStart(6)} ${'CDK cold'.padStart(8)}  ratio (run by run)          SDK floor  target  warm/s`,
    ...results.otherFunctions.map(
      (figures) =>
        `  ${figures.name.padEnd(14)} ${kib(figures.bundleBytes)} ${kib(figures.cdkDefaultBundleBytes).padStart(11)} ${String(figures.coldStart.deployed?.total.median).padStart(6)} ${String(figures.coldStart['cdk-default']?.total.median).padStart(8)}  ${`${figures.coldStartRatioToCdkDefault} ${formatSpread(figures.coldStartRatioSpread)}`.padEnd(26)} ${String(figures.sdkFloorRatioToCdkDefault).padStart(9)}  ≤ ${figures.coldStartTarget} ${check(figures.coldStartRatioToCdkDefault <= figures.coldStartTarget)}  ${String(figures.warm?.requestsPerSecond).padStart(6)}`,
    ),
    `  bundles ≤ ${targets.otherBundleKiB} KiB ${check(results.otherFunctions.every((figures) => figures.bundleBytes <= targets.otherBundleKiB * 1024))}. SDK floor: the bare handler (one DocumentClient put) built as deployed, over this function's CDK default, in the same runs; no build of a function that calls the store goes below it.`,
  );
  lines.push(
    '',
    'Authorizer cold start, ms (first answer includes one JWKS fetch on 127.0.0.1)',
    ...formatColdStartTable(results.authorizer.coldStart),
    `  verifications/s with a cached JWKS (RS256, one thread): ${results.authorizer.verificationsPerSecond}`,
  );
  const e2e = results.endToEnd;
  const listRatio = e2e.listP99ToCreateP99;
  lines.push(
    '',
    `Local API end to end: ${e2e.create.connections} connections for ${e2e.create.durationSeconds} s each, DynamoDB Local`,
    `  POST /plants              ${e2e.create.requestsPerSecond} requests/s, p50 ${e2e.create.latencyP50} ms, p99 ${e2e.create.latencyP99} ms, ${e2e.create.errors} errors, ${e2e.create.non2xx} non-2xx of ${e2e.create.requests}`,
    `  GET /plants/{id}          ${e2e.read.requestsPerSecond} requests/s, p50 ${e2e.read.latencyP50} ms, p99 ${e2e.read.latencyP99} ms, ${e2e.read.errors} errors, ${e2e.read.non2xx} non-2xx of ${e2e.read.requests}`,
    `  PATCH /plants/{id}        ${e2e.update.requestsPerSecond} requests/s, p50 ${e2e.update.latencyP50} ms, p99 ${e2e.update.latencyP99} ms, ${e2e.update.errors} errors, ${e2e.update.non2xx} non-2xx of ${e2e.update.requests} (If-Match: *, a new tag each)`,
    `  update p99 / create p99: ${e2e.updateP99ToCreateP99}`,
    `  GET /plants?limit=100     ${e2e.listPage.requestsPerSecond} requests/s, p50 ${e2e.listPage.latencyP50} ms, p99 ${e2e.listPage.latencyP99} ms, ${e2e.listPage.errors} errors, ${e2e.listPage.non2xx} non-2xx of ${e2e.listPage.requests} (${e2e.listPage.listedPlants} plants stored)`,
    `  list page p99 / create p99: ${listRatio} (target ≤ ${targets.listPageP99ToCreateP99}) ${check(listRatio <= targets.listPageP99ToCreateP99)}`,
  );
  const hooks = results.webhooks;
  lines.push(
    '',
    `Webhooks: ${hooks.creates} creates from ${hooks.clients} clients, a live receiver on 127.0.0.1`,
    `  distinct deliveries per run: ${hooks.distinctDeliveries.join(', ')} (of ${hooks.creates}) ${check(hooks.distinctDeliveries.every((count) => count === hooks.creates))}`,
    `  delivery delay (create answered → received): p50 ${hooks.deliveryDelay.p50} ms, p99 ${hooks.deliveryDelay.p99} ms, max ${hooks.deliveryDelay.max} ms (target p99 ≤ ${targets.webhookDeliveryP99Milliseconds} ms) ${check(hooks.deliveryDelay.p99 <= targets.webhookDeliveryP99Milliseconds)}`,
    `  create latency without webhooks: p50 ${hooks.createWithoutWebhooks.p50} ms, p99 ${hooks.createWithoutWebhooks.p99} ms; with: p50 ${hooks.createWithWebhooks.p50} ms, p99 ${hooks.createWithWebhooks.p99} ms`,
    ...formatRetrySimulation(results.retries),
    '',
    'create-plant in Lambda, estimated from the CPU time measured here',
    '  memory   vCPU   cold start (init + first answer)   warm CPU per create',
    ...results.memoryEstimates.map(
      (estimate) =>
        `  ${`${estimate.memorySizeMb} MB`.padEnd(8)} ${estimate.vcpuShare.toFixed(2).padStart(4)}   ${`${estimate.coldStartMilliseconds} ms`.padStart(32)}   ${`${estimate.warmCpuMilliseconds} ms`.padStart(19)}`,
    ),
  );
  console.log(lines.join('\n'));
}

function formatRetrySimulation(figures: RetrySimulationFigures): string[] {
  const { withoutDeadSubscriber: alone, withDeadSubscriber: dead } = figures;
  const total = figures.pending + figures.live;
  return [
    '',
    `Webhook retries (emulated deployed path, schedule ${figures.retrySchedule.join(', ')} s, hops ≤ ${figures.maximumDelaySeconds} s): a dead subscriber with ${figures.pending} pending events, then ${figures.live} live events`,
    `  live subscriber delay without the dead one: p50 ${alone.liveDelay.p50} ms, p99 ${alone.liveDelay.p99} ms; beside it: p50 ${dead.liveDelay.p50} ms, p99 ${dead.liveDelay.p99} ms (p99 ratio ${round(dead.liveDelay.p99 / alone.liveDelay.p99, 2)})`,
    `  messages in flight, at most: ${dead.maxInFlight} (the pollers' batches hold ${dead.inFlightBound}; the dead subscriber had ${total} events waiting) ${check(dead.maxInFlight <= dead.inFlightBound)}`,
    `  retries after their scheduled wait: min +${dead.retryLateness?.min} ms, p50 +${dead.retryLateness?.p50} ms, p99 +${dead.retryLateness?.p99} ms, max +${dead.retryLateness?.max} ms ${check((dead.retryLateness?.min ?? -1) >= 0)}`,
    `  every event delivered to the live subscriber: ${dead.liveDelivered}/${total} ${check(dead.liveDelivered === total)}; dead-lettered for the dead one: ${dead.deadLettered}/${total} ${check(dead.deadLettered === total)}`,
  ];
}

function formatColdStartTable(figures: Record<string, ColdStartFigures>): string[] {
  const header = `  ${'build'.padEnd(24)} ${['total', 'p90', 'node', 'init', 'first', 'CPU'].map((title) => title.padStart(6)).join(' ')}`;
  return [
    header,
    ...Object.entries(figures).map(
      ([name, figure]) =>
        `  ${name.padEnd(24)} ${[
          figure.total.median,
          figure.total.p90,
          figure.nodeStart.median,
          figure.init.median,
          figure.firstInvocation.median,
          figure.cpu.median,
        ]
          .map((value) => value.toFixed(1).padStart(6))
          .join(' ')}`,
    ),
  ];
}

function kib(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KiB`.padStart(10);
}

/** A verdict on a target; a quick run's samples are too small to judge, so it says so. */
function check(met: boolean): string {
  if (quick)
    return met ? '(met, indicative only: quick run)' : '(not met, indicative only: quick run)';
  return met ? 'met' : 'NOT met';
}

function formatSpread(spread: { min: number; p25: number; p75: number; max: number }): string {
  return `[middle half ${spread.p25}–${spread.p75}, all ${spread.min}–${spread.max}]`;
}

function formatLoad(load: readonly number[]): string {
  return load.map((value) => value.toFixed(2)).join(' ');
}

function log(message: string): void {
  console.error(message);
}

await main();
