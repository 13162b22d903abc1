/**
 * The warm path: back-to-back invocations of a bundle's handler in a fresh process against the
 * instant store, in rounds that alternate between subjects so that outside load hits them alike.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { round, seededRandom } from './statistics.ts';

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

/** A steady state's warm-up, each process's; then one block each not counted. */
export const steadyWarmUpMilliseconds = 5_000;

/**
 * Steady state: each subject in `processes` processes of its own, warmed up (`warm-runner.mjs`),
 * then `blocks` blocks; in each, every process runs `invocationsPerBlock` invocations, in an order
 * shuffled block by block, so that the subjects compared meet about the same outside load. A
 * subject's block is its processes' together: one process's layout (where its code and heap
 * landed) moves its throughput by a percent or two, as much as the differences to be measured.
 * A warm container past its first seconds; the rounds above are a fresh process's first.
 */
export async function measureSteadyState(
  subjects: readonly WarmSubject[],
  options: {
    eventPath: string;
    storeUrl: string;
    blocks: number;
    invocationsPerBlock: number;
    processes: number;
  },
): Promise<Record<string, WarmFigures>> {
  const runners: { runner: Runner; subject: number }[] = [];
  const runBlock = ({ runner }: (typeof runners)[number]) => {
    const result = runner.next(blockLimitMilliseconds);
    runner.child.send({ count: options.invocationsPerBlock });
    return result;
  };
  try {
    for (let copy = 0; copy < options.processes; copy += 1) {
      for (const [subject, settings] of subjects.entries()) {
        const roundMilliseconds = `blocks=${steadyWarmUpMilliseconds}`;
        const runner = startRunner(settings, { ...options, roundMilliseconds });
        runners.push({ runner, subject });
        await runner.next(steadyWarmUpMilliseconds + runnerStartMilliseconds);
      }
    }
    // The first warmed up has waited for the others since.
    for (const runner of runners) await runBlock(runner);
    const results = subjects.map(() => [] as RoundResult[]);
    const random = seededRandom(options.blocks);
    for (let block = 0; block < options.blocks; block += 1) {
      const sums = subjects.map(() => ({
        requests: 0,
        elapsedMilliseconds: 0,
        cpuMicroseconds: 0,
      }));
      for (const runner of shuffled(runners, random)) {
        const { requests, elapsedMilliseconds, cpuMicroseconds } = await runBlock(runner);
        const sum = sums[runner.subject] as (typeof sums)[number];
        sum.requests += requests;
        sum.elapsedMilliseconds += elapsedMilliseconds;
        sum.cpuMicroseconds += cpuMicroseconds;
      }
      for (const [subject, sum] of sums.entries()) results[subject]?.push(sum);
    }
    return Object.fromEntries(
      subjects.map(({ name }, index) => [name, figuresOf(results[index] ?? [])]),
    );
  } finally {
    for (const { runner } of runners) runner.child.kill('SIGKILL');
  }
}

/** A copy of `items` in a random order (Fisher–Yates). */
function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const copy = [...items];
  for (let index = copy.length - 1; index > 0; index -= 1) {
    const other = Math.floor(random() * (index + 1));
    [copy[index], copy[other]] = [copy[other] as T, copy[index] as T];
  }
  return copy;
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
 * A runner's process; its next report within `limitMilliseconds` (rejected, with its errors, if
 * it ends first: killed past the limit); and its end, rejected unless it exits cleanly.
 */
interface Runner {
  readonly child: ChildProcess;
  next(limitMilliseconds: number): Promise<RoundResult>;
  readonly ended: Promise<void>;
}

function startRunner(
  subject: WarmSubject,
  options: { eventPath: string; storeUrl: string; roundMilliseconds: number | string },
): Runner {
  // The handler logs a line per request; /dev/null keeps the write without the noise.
  const devNull = openSync('/dev/null', 'w');
  let child: ChildProcess;
  try {
    child = fork(
      runnerPath,
      [
        subject.bundlePath,
        subject.eventPath ?? options.eventPath,
        String(options.roundMilliseconds),
        options.storeUrl,
      ],
      { env: subject.environment, stdio: ['ignore', devNull, 'pipe', 'ipc'] },
    );
  } finally {
    closeSync(devNull);
  }
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  let killedAfter: number | undefined;
  const ended = new Promise<void>((resolve, reject) => {
    const fail = (how: unknown) => {
      const why = killedAfter === undefined ? `failed (${how})` : `killed after ${killedAfter} ms`;
      reject(new Error(`Warm run of ${subject.name} ${why}: ${stderr.slice(-2000)}`));
    };
    child.on('error', fail);
    child.on('close', (code, signal) => (code === 0 ? resolve() : fail(signal ?? code)));
  });
  ended.catch(() => undefined);
  const endedEarly = ended.then(() => {
    throw new Error(`Warm run of ${subject.name} ended before it reported`);
  });
  endedEarly.catch(() => undefined);
  return {
    child,
    ended,
    next: (limitMilliseconds) => {
      const timer = setTimeout(() => {
        killedAfter = limitMilliseconds;
        child.kill('SIGKILL');
      }, limitMilliseconds);
      let report: (result: RoundResult) => void = () => undefined;
      const reported = new Promise<RoundResult>((resolve) => {
        report = resolve;
        child.once('message', report);
      });
      return Promise.race([reported, endedEarly]).finally(() => {
        clearTimeout(timer);
        child.off('message', report);
      });
    },
  };
}

interface RoundResult {
  readonly requests: number;
  readonly elapsedMilliseconds: number;
  readonly cpuMicroseconds: number;
}

/** One round in a fresh runner, which must then exit cleanly. */
async function runRound(
  subject: WarmSubject,
  options: { eventPath: string; storeUrl: string; roundMilliseconds: number },
): Promise<RoundResult> {
  const runner = startRunner(subject, options);
  const result = await runner.next(options.roundMilliseconds + runnerStartMilliseconds);
  const timer = setTimeout(() => runner.child.kill('SIGKILL'), runnerStartMilliseconds);
  try {
    await runner.ended;
  } finally {
    clearTimeout(timer);
  }
  return result;
}

/** The middle value (the upper one of an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}
