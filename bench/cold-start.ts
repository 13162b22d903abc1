/**
 * Cold starts measured the only honest way on one machine: a fresh Node.js process per sample,
 * from spawn to the first answer, with the variants interleaved run by run so that a burst of
 * load from elsewhere hits them all alike.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type Summary, summarize } from './statistics.ts';

const runnerPath = fileURLToPath(new URL('./cold-start-runner.mjs', import.meta.url));

/** One thing to start cold: a bundle and the invocation it answers, or a bare process. */
export interface ColdStartSubject {
  readonly name: string;
  /** The bundle to import; absent for a bare `node` process. */
  readonly bundlePath?: string;
  /** A file holding the event of the one invocation. */
  readonly eventPath?: string;
  /** The child's whole environment (nothing is inherited, as in Lambda). */
  readonly environment: Readonly<Record<string, string>>;
  /** Extra node flags (none in Lambda). */
  readonly nodeArguments?: readonly string[];
  /** What the invocation must answer (`200`, `Allow`); anything else fails the benchmark. */
  readonly expectedOutcome?: string;
}

/** Milliseconds, each a summary over the runs. */
export interface ColdStartFigures {
  /** Spawn to first answer: what a cold request waits for on top of the platform. */
  readonly total: Summary;
  /** Spawn to the runner's first line: Node.js itself. */
  readonly nodeStart: Summary;
  /** Importing the bundle: module loading and evaluation, client construction (Lambda's init). */
  readonly init: Summary;
  /** The first invocation: the first request's lazy work (endpoint, credentials, signing…). */
  readonly firstInvocation: Summary;
  /** CPU time of the whole process up to the answer (user + system), Node.js's own included. */
  readonly cpu: Summary;
  /** Every run's total, in run order: runs of all subjects interleave, so they pair up. */
  readonly totals: readonly number[];
  /** Every run's CPU time, in run order, paired like `totals`. */
  readonly cpus: readonly number[];
}

/** Starts every subject `runs` times, interleaved, after one unmeasured warm-up round. */
export async function measureColdStarts(
  subjects: readonly ColdStartSubject[],
  runs: number,
): Promise<Record<string, ColdStartFigures>> {
  // The warm-up fills the file cache, as a Lambda host's cache of the runtime would be.
  for (const subject of subjects) await startOnce(subject);
  const samples = new Map(subjects.map((subject) => [subject.name, [] as Sample[]]));
  for (let run = 0; run < runs; run += 1) {
    for (const subject of subjects) samples.get(subject.name)?.push(await startOnce(subject));
  }
  return Object.fromEntries(
    subjects.map(({ name }) => {
      const taken = samples.get(name) ?? [];
      return [
        name,
        {
          total: summarize(taken.map((sample) => sample.total)),
          nodeStart: summarize(taken.map((sample) => sample.nodeStart)),
          init: summarize(taken.map((sample) => sample.init)),
          firstInvocation: summarize(taken.map((sample) => sample.firstInvocation)),
          cpu: summarize(taken.map((sample) => sample.cpu)),
          totals: taken.map((sample) => Math.round(sample.total * 10) / 10),
          cpus: taken.map((sample) => Math.round(sample.cpu * 10) / 10),
        },
      ];
    }),
  );
}

interface Sample {
  readonly total: number;
  readonly nodeStart: number;
  readonly init: number;
  readonly firstInvocation: number;
  readonly cpu: number;
}

/** Bounds one sample: a hung child is killed and fails the benchmark. */
const sampleTimeoutMilliseconds = 15_000;

function startOnce(subject: ColdStartSubject): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const spawned = process.hrtime.bigint();
    const child = spawn(
      process.execPath,
      [
        ...(subject.nodeArguments ?? []),
        runnerPath,
        subject.bundlePath ?? 'none',
        subject.eventPath ?? '',
      ],
      { env: subject.environment, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), sampleTimeoutMilliseconds);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const lastLine = stdout.trimEnd().split('\n').at(-1) ?? '';
      if (code !== 0 || !lastLine.startsWith('{"outcome"')) {
        reject(
          new Error(
            `Cold start of ${subject.name} failed (${signal ?? code}): ${stderr.slice(-2000)}${stdout.slice(-500)}`,
          ),
        );
        return;
      }
      const times = JSON.parse(lastLine) as Record<string, string | number>;
      const expected = subject.expectedOutcome ?? 'none';
      if (times.outcome !== expected) {
        reject(new Error(`${subject.name} answered ${times.outcome}, expected ${expected}`));
        return;
      }
      const started = BigInt(times.started ?? 0);
      const imported = BigInt(times.imported ?? 0);
      const answered = BigInt(times.answered ?? 0);
      const cpuMicroseconds = Number(times.cpuMicroseconds ?? 0);
      resolve({
        total: milliseconds(answered - spawned),
        nodeStart: milliseconds(started - spawned),
        init: milliseconds(imported - started),
        firstInvocation: milliseconds(answered - imported),
        cpu: cpuMicroseconds / 1000,
      });
    });
  });
}

function milliseconds(nanoseconds: bigint): number {
  return Number(nanoseconds) / 1e6;
}

/**
 * The environment the Lambda runtime gives a function (the parts the SDK and Node.js read):
 * the role's credentials, the region, the function's name and memory; plus `variables`.
 */
export function createLambdaEnvironment(
  functionName: string,
  memorySizeMb: number,
  variables: Readonly<Record<string, string>>,
): Record<string, string> {
  return {
    AWS_ACCESS_KEY_ID: 'ASIABENCHMARKEXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'bench/secret/access/key/not/a/real/one/0000',
    AWS_SESSION_TOKEN: 'bench-session-token',
    AWS_REGION: 'eu-west-1',
    AWS_DEFAULT_REGION: 'eu-west-1',
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
    AWS_LAMBDA_FUNCTION_NAME: functionName,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(memorySizeMb),
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    LANG: 'en_US.UTF-8',
    TZ: ':UTC',
    ...variables,
  };
}
