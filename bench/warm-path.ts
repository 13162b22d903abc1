/**
 * The warm path: back-to-back invocations of a bundle's handler in a fresh process against the
 * instant store, in rounds that alternate between subjects so that outside load hits them alike.
 */
import { fork } from 'node:child_process';
import { openSync } from 'node:fs';
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
  return Object.fromEntries(
    subjects.map(({ name }) => {
      const rounds = results.get(name) ?? [];
      const requestsPerSecondByRound = rounds.map((result) =>
        Math.round((result.requests * 1000) / result.elapsedMilliseconds),
      );
      return [
        name,
        {
          requestsPerSecond: median(requestsPerSecondByRound),
          cpuMicrosecondsPerRequest: round(
            median(rounds.map((result) => result.cpuMicroseconds / result.requests)),
          ),
          requestsPerSecondByRound,
        },
      ];
    }),
  );
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
  return new Promise((resolve, reject) => {
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
    let stderr = '';
    let result: RoundResult | undefined;
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('message', (message) => {
      result = message as RoundResult;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.roundMilliseconds + 15_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (result === undefined || code !== 0) {
        reject(
          new Error(
            `Warm run of ${subject.name} failed (${signal ?? code}): ${stderr.slice(-2000)}`,
          ),
        );
      } else {
        resolve(result);
      }
    });
  });
}

/** The middle value (the upper one of an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}
