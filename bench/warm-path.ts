/**
 * The warm path: back-to-back invocations of a bundle's handler in a fresh process against the
 * instant store, in rounds that alternate between subjects so that outside load hits them alike.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { round } from './statistics.ts';

const runnerPath = fileURLToPath(new URL('./warm-runner.mjs', import.meta.url));

/** A handler to run warm, or `raw-http` for a plain kept-alive HTTP request per put. */
export interface WarmSubject {
  readonly name: string;
  readonly bundlePath: string | 'raw-http';
  readonly environment: Readonly<Record<string, string>>;
  /** The event to invoke with; the options' one when absent. */
  readonly eventPath?: string;
}

export interface WarmFigures {
  /** Median over the rounds of invocations per second, one after the other (one thread). */
  readonly requestsPerSecond: number;
  /** Median CPU time (user + system) per invocation, in microseconds. */
  readonly cpuMicrosecondsPerRequest: number;
  /** Invocations per second of each round, in order (rounds of all subjects alternate). */
  readonly requestsPerSecondByRound: readonly number[];
}

/** Runs every subject `rounds` times for `roundMilliseconds` each, interleaved. */
export async function measureWarmPath(
  subjects: readonly WarmSubject[],
  options: { eventPath: string; storeUrl: string; rounds: number; roundMilliseconds: number },
): Promise<Record<string, WarmFigures>> {
  const results = new Map(subjects.map((subject) => [subject.name, [] as RoundResult[]]));
  for (let index = 0; index < options.rounds; index += 1) {
    for (const subject of subjects) {
      results.get(subject.name)?.push(await runRound(subject, options));
    }
  }
  return Object.fromEntries(subjects.map(({ name }) => [name, figuresOf(results.get(name) ?? [])]));
}

/** A steady state's warm-up: past it, V8 has tiered the hot path up and the heap has grown. */
export const steadyWarmUpMilliseconds = 3000;

/**
 * Steady state: each subject in one process of its own, warmed up until V8 has tiered its hot path
 * up (`warm-runner.mjs`), then `blocks` blocks of `invocationsPerBlock` invocations, a block of each
 * subject in turn (the order rotating), so that a block's neighbours see the same outside load. A
 * warm container's life after its first seconds; the rounds above are a fresh process's first.
 */
export async function measureSteadyState(
  subjects: readonly WarmSubject[],
  options: { eventPath: string; storeUrl: string; blocks: number; invocationsPerBlock: number },
): Promise<Record<string, WarmFigures>> {
  const runners: Runner[] = [];
  try {
    for (const subject of subjects) {
      const roundMilliseconds = `blocks=${steadyWarmUpMilliseconds}`;
      const runner = startRunner(subject, { ...options, roundMilliseconds });
      runners.push(runner);
      await runner.next(steadyWarmUpMilliseconds + runnerStartMilliseconds);
    }
    const results = subjects.map(() => [] as RoundResult[]);
    for (let block = 0; block < options.blocks; block += 1) {
      for (let turn = 0; turn < runners.length; turn += 1) {
        const index = (turn + block) % runners.length;
        const runner = runners[index] as Runner;
        const result = runner.next(blockLimitMilliseconds);
        runner.child.send({ count: options.invocationsPerBlock });
        results[index]?.push(await result);
      }
    }
    return Object.fromEntries(
      subjects.map(({ name }, index) => [name, figuresOf(results[index] ?? [])]),
    );
  } finally {
    for (const { child } of runners) child.kill('SIGKILL');
  }
}

function figuresOf(rounds: readonly RoundResult[]): WarmFigures {
  const requestsPerSecondByRound = rounds.map((result) =>
    Math.round((result.requests * 1000) / result.elapsedMilliseconds),
  );
  return {
    requestsPerSecond: median(requestsPerSecondByRound),
    cpuMicrosecondsPerRequest: round(
      median(rounds.map((result) => result.cpuMicroseconds / result.requests)),
    ),
    requestsPerSecondByRound,
  };
}

/** Time for a runner to start and import its bundle; a block's at most (about 0.5 s each here). */
const runnerStartMilliseconds = 15_000;
const blockLimitMilliseconds = 60_000;

/**
 * A runner's process, and its next report within `limitMilliseconds`: rejected, with its errors,
 * if it ends first (killed past the limit).
 */
interface Runner {
  readonly child: ChildProcess;
  next(limitMilliseconds: number): Promise<RoundResult>;
}

function startRunner(
  subject: WarmSubject,
  options: { eventPath: string; storeUrl: string; roundMilliseconds: number | string },
): Runner {
  // The handler logs a line per request; /dev/null keeps the write without the noise.
  const devNull = openSync('/dev/null', 'w');
  const child = fork(
    runnerPath,
    [
      subject.bundlePath,
      subject.eventPath ?? options.eventPath,
      String(options.roundMilliseconds),
      options.storeUrl,
    ],
    { env: subject.environment, stdio: ['ignore', devNull, 'pipe', 'ipc'] },
  );
  closeSync(devNull);
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const ended = new Promise<never>((_, reject) => {
    const fail = (code: unknown) =>
      reject(new Error(`Warm run of ${subject.name} failed (${code}): ${stderr.slice(-2000)}`));
    child.on('error', fail).on('close', (code, signal) => fail(signal ?? code));
  });
  ended.catch(() => undefined);
  return {
    child,
    next: (limitMilliseconds) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), limitMilliseconds);
      const report = new Promise<RoundResult>((resolve) => child.once('message', resolve));
      return Promise.race([report, ended]).finally(() => clearTimeout(timer));
    },
  };
}

interface RoundResult {
  readonly requests: number;
  readonly elapsedMilliseconds: number;
  readonly cpuMicroseconds: number;
}

function runRound(
  subject: WarmSubject,
  options: { eventPath: string; storeUrl: string; roundMilliseconds: number },
): Promise<RoundResult> {
  return startRunner(subject, options).next(options.roundMilliseconds + runnerStartMilliseconds);
}

/** The middle value (the upper one of an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}
