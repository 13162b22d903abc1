/**
 * `npm run bench`: what the Plant Store's functions cost, as figures (never pass/fail timings).
 * Builds the bundles as the CDK app does, then measures bundle sizes, create-plant's cold start
 * (against the CDK-default build and a bare Node.js), its warm path (against a bare handler and a
 * raw HTTP put), the authorizer, and the local API end to end under load. Prints tables and
 * writes everything to `.data/bench/results.json`. `--quick` takes fewer samples (a smoke run).
 *
 * Every server and process a section starts is stopped when it ends, also when it fails.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { functionSettings } from '../infra/function-settings.ts';
import { benchMethodArn, benchmarkAuthorizer, startAuthorizerFixture } from './authorizer.ts';
import { type BenchBundles, buildBenchBundles, repositoryRoot } from './bundles.ts';
import {
  type ColdStartFigures,
  type ColdStartSubject,
  createLambdaEnvironment,
  measureColdStarts,
} from './cold-start.ts';
import { measureEndToEnd } from './end-to-end.ts';
import { startInstantDynamoDb } from './instant-dynamodb.ts';
import { round } from './statistics.ts';
import { measureWarmPath, median } from './warm-path.ts';

const quick = process.argv.includes('--quick');
const coldStartRuns = quick ? 5 : 31;
const warmRounds = quick ? 1 : 9;
const warmRoundMilliseconds = quick ? 500 : 1000;
const endToEndSeconds = quick ? 2 : 10;

const dataDirectory = join(repositoryRoot, '.data', 'bench');
const resultsPath = join(dataDirectory, 'results.json');
const sampleEventPath = join(repositoryRoot, 'events', 'create-plant.json');

/** The issue's targets, checked against the figures in the summary. */
const targets = {
  createPlantBundleKiB: 200,
  authorizerBundleKiB: 60,
  coldStartRatioToCdkDefault: 0.6,
  warmRatioToBareHandler: 0.85,
};

/** Lambda gives a function one full vCPU at 1769 MB and a proportional share below. */
const fullVcpuMemoryMb = 1769;
const memoryChoicesMb = [256, 512, 1024, 1769];

async function main(): Promise<void> {
  mkdirSync(dataDirectory, { recursive: true });
  const loadBefore = loadavg();
  const started = performance.now();
  log(`Plant Store benchmark${quick ? ' (quick)' : ''}; load average ${formatLoad(loadBefore)}`);

  log('Building the bundles…');
  const bundles = await buildBenchBundles(join(dataDirectory, 'bundles'));

  log(`create-plant cold starts (${coldStartRuns} fresh processes per build)…`);
  const coldStart = await measureCreatePlantColdStart(bundles);

  log(`Warm path (${warmRounds} rounds of ${warmRoundMilliseconds} ms per handler)…`);
  const warmPath = await measureCreatePlantWarmPath(bundles);

  log('Authorizer…');
  const authorizer = await measureAuthorizer(bundles);

  log(`Local API end to end (${endToEndSeconds} s under load, DynamoDB Local)…`);
  const endToEnd = await measureEndToEnd({ durationSeconds: endToEndSeconds });

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
    authorizer,
    endToEnd,
    memoryEstimates: estimateLambdaTimes(coldStart.figures, warmPath.figures),
  };
  writeFileSync(resultsPath, `${JSON.stringify(results, null, 2)}\n`);
  printSummary(results);
  log(`Results: ${resultsPath}`);
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
    return {
      figures,
      ratioToBareHandler: round(
        median(createPlantRounds.map((value, index) => value / (bareRounds[index] ?? Number.NaN))),
        2,
      ),
    };
  } finally {
    await store.close();
  }
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
  authorizer: Awaited<ReturnType<typeof measureAuthorizer>>;
  endToEnd: Awaited<ReturnType<typeof measureEndToEnd>>;
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
    `  deployed / CDK default: ${cold.ratioToCdkDefault} (target ≤ ${targets.coldStartRatioToCdkDefault}) ${check(cold.ratioToCdkDefault <= targets.coldStartRatioToCdkDefault)}; above a bare Node.js: ${cold.ratioToCdkDefaultAboveBareNode}`,
  );
  const warm = results.warmPath;
  lines.push(
    '',
    'Warm path (one thread, instant store)          creates/s   CPU µs/request',
    ...Object.entries(warm.figures).map(
      ([name, figures]) =>
        `  ${name.padEnd(44)} ${String(figures.requestsPerSecond).padStart(9)}   ${String(figures.cpuMicrosecondsPerRequest).padStart(14)}`,
    ),
    `  create-plant / bare handler: ${warm.ratioToBareHandler} (target ≥ ${targets.warmRatioToBareHandler}) ${check(warm.ratioToBareHandler >= targets.warmRatioToBareHandler)}`,
  );
  lines.push(
    '',
    'Authorizer cold start, ms (first answer includes one JWKS fetch on 127.0.0.1)',
    ...formatColdStartTable(results.authorizer.coldStart),
    `  verifications/s with a cached JWKS (RS256, one thread): ${results.authorizer.verificationsPerSecond}`,
  );
  const e2e = results.endToEnd;
  lines.push(
    '',
    `Local API end to end: ${e2e.connections} connections for ${e2e.durationSeconds} s, DynamoDB Local`,
    `  ${e2e.requestsPerSecond} requests/s, p50 ${e2e.latencyP50} ms, p99 ${e2e.latencyP99} ms, ${e2e.errors} errors, ${e2e.non2xx} non-2xx of ${e2e.requests}`,
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

function check(met: boolean): string {
  return met ? 'met' : 'NOT met';
}

function formatLoad(load: readonly number[]): string {
  return load.map((value) => value.toFixed(2)).join(' ');
}

function log(message: string): void {
  console.error(message);
}

await main();
