/**
 * The Lambda functions measured one by one: each API function's cold start against its
 * CDK-default build and the SDK's floor, in the same interleaved runs; the create function's
 * every bundling lever and its warm path; the authorizer. Each section stops what it starts.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  functionDisplayName,
  type RouteFunctionName,
  routesOf,
} from '../functions/shared/http/routes.ts';
import { functionSettings } from '../infra/function-settings.ts';
import { stages } from '../infra/stages.ts';
import { benchMethodArn, benchmarkAuthorizer, startAuthorizerFixture } from './authorizer.ts';
import {
  type BenchBundles,
  createFunction,
  createFunctionName,
  repositoryRoot,
} from './bundles.ts';
import {
  type ColdStartFigures,
  type ColdStartSubject,
  createLambdaEnvironment,
  measureColdStarts,
} from './cold-start.ts';
import { startInstantDynamoDb } from './instant-dynamodb.ts';
import { round } from './statistics.ts';
import { measureSteadyState, measureWarmPath, median, type WarmFigures } from './warm-path.ts';

/** How many samples each measurement takes. */
export interface Sampling {
  readonly coldStartRuns: number;
  readonly warmRounds: number;
  readonly warmRoundMilliseconds: number;
  /** Tracing's steady state: processes a build, blocks, and invocations a process and block. */
  readonly steadyProcesses: number;
  readonly steadyBlocks: number;
  readonly steadyInvocationsPerBlock: number;
  readonly authorizerMilliseconds: number;
}

/** The range of the middle half and the extremes of some values, rounded for printing. */
export interface Spread {
  readonly min: number;
  readonly p25: number;
  readonly p75: number;
  readonly max: number;
}

/**
 * A function's cold start set against its CDK-default build and the SDK's floor: the bare
 * handler (one DocumentClient put, nothing else) built as deployed. No build of a function whose
 * every answer needs the store starts faster than its client, so what a function's own code
 * costs is its distance above that floor, which is what the report judges: in CPU time, run by
 * run. A cold start is CPU-bound work; its wall time on a shared machine also holds the waits for
 * the other core, which move a single start by tens of milliseconds either way, while the
 * distance to be judged is a few.
 */
export interface ApiColdStart {
  readonly name: RouteFunctionName;
  readonly runs: number;
  readonly figures: Record<string, ColdStartFigures>;
  /** deployed / CDK default (medians), and run by run. */
  readonly ratioToCdkDefault: number;
  readonly ratioSpread: Spread;
  /** The floor / CDK default (medians): the lowest ratio any build can reach. */
  readonly sdkFloorRatioToCdkDefault: number;
  /** (deployed − floor) / CDK default, in CPU time, run by run: the median and its spread. */
  readonly aboveFloor: number;
  readonly aboveFloorSpread: Spread;
  /** deployed − floor, CPU milliseconds, run by run: the median. */
  readonly aboveFloorCpuMilliseconds: number;
  /** deployed − floor (medians of the wall times), milliseconds. */
  readonly aboveFloorMilliseconds: number;
}

const sdkFloorBuild = 'sdk-floor';

export function spreadOf(values: readonly number[], digits = 2): Spread {
  const sorted = [...values].filter(Number.isFinite).sort((a, b) => a - b);
  const at = (fraction: number) =>
    round(sorted[Math.floor(fraction * (sorted.length - 1))] ?? Number.NaN, digits);
  return { min: at(0), p25: at(0.25), p75: at(0.75), max: at(1) };
}

/** The cold start's ratios, from figures that hold `deployed`, `cdk-default` and the floor. */
function judgeColdStart(
  name: RouteFunctionName,
  runs: number,
  figures: Record<string, ColdStartFigures>,
): ApiColdStart {
  const medianOf = (build: string) => figures[build]?.total.median ?? Number.NaN;
  const totals = (build: string) => figures[build]?.totals ?? [];
  const cpus = (build: string) => figures[build]?.cpus ?? [];
  const cdkDefault = totals('cdk-default');
  const ratios = totals('deployed').map(
    (value, index) => value / (cdkDefault[index] ?? Number.NaN),
  );
  const floorCpu = cpus(sdkFloorBuild);
  const cdkDefaultCpu = cpus('cdk-default');
  const aboveCpu = cpus('deployed').map((value, index) => value - (floorCpu[index] ?? Number.NaN));
  const above = aboveCpu.map((value, index) => value / (cdkDefaultCpu[index] ?? Number.NaN));
  return {
    name,
    runs,
    figures,
    ratioToCdkDefault: round(medianOf('deployed') / medianOf('cdk-default'), 2),
    ratioSpread: spreadOf(ratios),
    sdkFloorRatioToCdkDefault: round(medianOf(sdkFloorBuild) / medianOf('cdk-default'), 2),
    aboveFloor: round(median(above), 3),
    aboveFloorSpread: spreadOf(above, 3),
    aboveFloorCpuMilliseconds: round(median(aboveCpu)),
    aboveFloorMilliseconds: round(medianOf('deployed') - medianOf(sdkFloorBuild)),
  };
}

/** A function's sample event (`events/<function>.json`, as `sam local invoke` takes it). */
function sampleEventPath(name: RouteFunctionName): string {
  return join(repositoryRoot, 'events', `${functionDisplayName(name)}.json`);
}

/** What a function answers its sample event against the instant store. */
function expectedOutcome(name: RouteFunctionName): string {
  return routesOf(name).every((route) => route.method === 'DELETE') ? '204' : '200';
}

/** The bare handler's event: the create's sample with a small id (it reads ids as numbers). */
function writeSdkFloorEvent(directory: string): string {
  const path = join(directory, 'sdk-floor-event.json');
  const event = JSON.parse(readFileSync(sampleEventPath(createFunction), 'utf8'));
  event.body = event.body.replace(/"id":\d+/, '"id":7');
  writeFileSync(path, JSON.stringify(event));
  return path;
}

/**
 * A function's Lambda environment against the store, its builds as cold-start subjects (`build`,
 * with more variables if asked), and the SDK floor's subject beside it.
 */
function coldStartSubjects(
  name: RouteFunctionName,
  storeUrl: string,
  bareCreatePath: string,
  floorEventPath: string,
) {
  const environment = createLambdaEnvironment(
    functionDisplayName(name),
    functionSettings[name].memorySizeMb,
    { TABLE_NAME: 'plants', DYNAMODB_ENDPOINT: storeUrl },
  );
  const build = (label: string, bundlePath: string, extra: Record<string, string> = {}) =>
    ({
      name: label,
      bundlePath,
      eventPath: sampleEventPath(name),
      environment: { ...environment, ...extra },
      expectedOutcome: expectedOutcome(name),
    }) satisfies ColdStartSubject;
  const floor: ColdStartSubject = {
    ...build(sdkFloorBuild, bareCreatePath),
    eventPath: floorEventPath,
    expectedOutcome: '200',
  };
  return { environment, build, floor };
}

/** Every API function as the sampling says, against one instant store. */
export async function measureApiFunctions(
  bundles: BenchBundles,
  sampling: Sampling,
  dataDirectory: string,
) {
  const store = await startInstantDynamoDb();
  const compileCacheDirectory = mkdtempSync(join(tmpdir(), 'plant-store-compile-cache-'));
  const floorEventPath = writeSdkFloorEvent(dataDirectory);
  try {
    const subjectOf = (name: RouteFunctionName) =>
      coldStartSubjects(name, store.url, bundles.bareCreate.path, floorEventPath);

    // The create function: every bundling lever, and V8's code cache (not deployable as is: a
    // new Lambda instance starts with an empty cache), beside the floor and a bare Node.js.
    const create = subjectOf(createFunction);
    const createColdStart = judgeColdStart(
      createFunction,
      sampling.coldStartRuns,
      await measureColdStarts(
        [
          { name: 'bare-node', environment: create.environment },
          create.build('deployed', bundles.create.path),
          create.floor,
          ...bundles.createVariants.map((bundle) => create.build(bundle.name, bundle.path)),
          create.build('deployed+compile-cache', bundles.create.path, {
            NODE_COMPILE_CACHE: compileCacheDirectory,
          }),
        ],
        sampling.coldStartRuns,
      ),
    );
    const createWarmPath = await measureCreateWarmPath(
      bundles,
      create.environment,
      store.url,
      sampling,
    );

    const others = [];
    for (const { name, deployed, cdkDefault } of bundles.otherApiFunctions) {
      const subject = subjectOf(name);
      const coldStart = judgeColdStart(
        name,
        sampling.coldStartRuns,
        await measureColdStarts(
          [
            { name: 'bare-node', environment: subject.environment },
            subject.build('deployed', deployed.path),
            subject.build('cdk-default', cdkDefault.path),
            subject.floor,
          ],
          sampling.coldStartRuns,
        ),
      );
      const warm = await measureWarmPath(
        [
          {
            name,
            bundlePath: deployed.path,
            environment: subject.environment,
            eventPath: sampleEventPath(name),
          },
        ],
        {
          eventPath: sampleEventPath(name),
          storeUrl: store.url,
          rounds: Math.min(sampling.warmRounds, 5),
          roundMilliseconds: sampling.warmRoundMilliseconds,
        },
      );
      others.push({
        ...coldStart,
        bundleBytes: deployed.bytes,
        cdkDefaultBundleBytes: cdkDefault.bytes,
        warm: warm[name],
      });
    }
    return {
      create: { ...createColdStart, warmPath: createWarmPath, storeRequests: store.requestCount },
      others,
    };
  } finally {
    await store.close();
    rmSync(compileCacheDirectory, { recursive: true, force: true });
  }
}

/**
 * The create function's warm path against the bare handler, a raw HTTP put, and the bare
 * handler building its client per invocation; the ratio round by round.
 */
async function measureCreateWarmPath(
  bundles: BenchBundles,
  environment: Record<string, string>,
  storeUrl: string,
  sampling: Sampling,
) {
  // Tracing's cost: the same function untraced, and sending prod's share of traces to a sink.
  const untraced = bundles.createVariants.find(({ name }) => name === 'deployed-untraced');
  const sink = createServer((request, response) =>
    request.resume().on('end', () => response.end()),
  );
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  const exporting = {
    ...environment,
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(sink.address() as AddressInfo).port}`,
    OTEL_TRACES_SAMPLER_ARG: String(xraySampledShare * (stages.prod.traceSampleRatio ?? 0)),
  };
  const traced = [
    { name: createFunctionName, bundlePath: bundles.create.path, environment },
    { name: tracingSubjects.untraced, bundlePath: untraced?.path ?? '', environment },
    { name: tracingSubjects.exporting, bundlePath: bundles.create.path, environment: exporting },
  ];
  const eventPath = sampleEventPath(createFunction);
  try {
    const figures = await measureWarmPath(
      [
        ...traced,
        { name: 'bare-handler', bundlePath: bundles.bareCreate.path, environment },
        { name: 'raw-http-put', bundlePath: 'raw-http', environment },
        {
          name: 'bare, client per invocation',
          bundlePath: bundles.bareCreate.path,
          environment: { ...environment, BENCH_CLIENT_PER_INVOCATION: '1' },
        },
      ],
      {
        eventPath,
        storeUrl,
        rounds: sampling.warmRounds,
        roundMilliseconds: sampling.warmRoundMilliseconds,
      },
    );
    // The untraced build twice: how far apart two identical subjects come out, the method's own.
    const control = {
      name: tracingSubjects.control,
      bundlePath: untraced?.path ?? '',
      environment,
    };
    const steady = await measureSteadyState([...traced, control], {
      eventPath,
      storeUrl,
      blocks: sampling.steadyBlocks,
      invocationsPerBlock: sampling.steadyInvocationsPerBlock,
      processes: sampling.steadyProcesses,
    });
    // Round by round, each create round against the bare round right after it: load from
    // elsewhere changes between rounds far more than within a pair.
    const createRounds = figures[createFunctionName]?.requestsPerSecondByRound ?? [];
    const bareRounds = figures['bare-handler']?.requestsPerSecondByRound ?? [];
    const roundRatios = createRounds.map(
      (value, index) => value / (bareRounds[index] ?? Number.NaN),
    );
    return {
      figures,
      ratioToBareHandler: round(median(roundRatios), 2),
      ratioSpread: spreadOf(roundRatios),
      steady,
      steadyProcesses: sampling.steadyProcesses,
      // Judged in the steady state; a fresh process's first seconds are reported beside it.
      tracing: {
        carried: toUntraced(steady, createFunctionName),
        exporting: toUntraced(steady, tracingSubjects.exporting),
        control: toUntraced(steady, tracingSubjects.control),
      },
      tracingFirstSeconds: {
        carried: toUntraced(figures, createFunctionName),
        exporting: toUntraced(figures, tracingSubjects.exporting),
      },
    };
  } finally {
    sink.close();
  }
}

/** A subject's throughput over the untraced build's, round (or block) by round. */
function toUntraced(figures: Record<string, WarmFigures>, name: string) {
  const untracedRounds = figures[tracingSubjects.untraced]?.requestsPerSecondByRound ?? [];
  const ratios = (figures[name]?.requestsPerSecondByRound ?? []).map(
    (value, index) => value / (untracedRounds[index] ?? Number.NaN),
  );
  return { ratio: round(median(ratios), 3), spread: spreadOf(ratios) };
}

/** The share of requests X-Ray's default sampling rule samples, past its first a second. */
const xraySampledShare = 0.05;

/** The warm subjects that weigh tracing against the create function built without it. */
export const tracingSubjects = {
  untraced: 'deployed-untraced',
  control: 'deployed-untraced again (control)',
  exporting: `prod's spans sent (${xraySampledShare * (stages.prod.traceSampleRatio ?? 0) * 100} % of requests)`,
} as const;

/** The authorizer: its cold start against its CDK-default build, and verifications per second. */
export async function measureAuthorizer(
  bundles: BenchBundles,
  sampling: Sampling,
  dataDirectory: string,
) {
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
      sampling.coldStartRuns,
    );
    const { verificationsPerSecond } = await benchmarkAuthorizer({
      durationMilliseconds: sampling.authorizerMilliseconds,
    });
    return { coldStart, verificationsPerSecond };
  } finally {
    await fixture.close();
  }
}

/** Lambda gives a function one full vCPU at 1769 MB and a proportional share below. */
const fullVcpuMemoryMb = 1769;
const memoryChoicesMb = [256, 512, 1024, 1769];

/**
 * Lambda time of the create function's CPU-bound work at each memory size, from the CPU time
 * measured here and the vCPU share Lambda gives. A Lambda vCPU is not this machine's core, so
 * these are estimates for comparing sizes, not predictions.
 */
export function estimateLambdaTimes(
  coldStart: Record<string, ColdStartFigures>,
  warmPath: Record<string, { cpuMicrosecondsPerRequest: number }>,
) {
  const bareCpu = coldStart['bare-node']?.cpu.median ?? 0;
  // Node.js's own start is part of the platform's share of a cold start, not the function's.
  const coldCpuMilliseconds = (coldStart.deployed?.cpu.median ?? 0) - bareCpu;
  const warmCpuMilliseconds = (warmPath[createFunctionName]?.cpuMicrosecondsPerRequest ?? 0) / 1000;
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
