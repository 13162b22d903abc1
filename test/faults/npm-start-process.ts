/**
 * `npm start` as a child process group that the fault run kills with SIGKILL and starts again,
 * on the same port and data folder; stopped at the end as Ctrl-C stops it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';

const repositoryRoot = path.resolve(import.meta.dirname, '../..');

export interface NpmStartProcess {
  readonly url: string;
  /** Starts it (again); resolves once it prints its API line. */
  start(): Promise<void>;
  /** SIGKILL to the whole group: nothing is saved, nothing stops cleanly. */
  kill(): Promise<void>;
  /** Ctrl-C to the group, and waits for the exit. */
  stop(): Promise<void>;
  /** The output of every run so far, the last 50,000 characters. */
  output(): string;
}

/** A port that was free a moment ago, on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Starts `npm start` with `environment` (its `PORT` fixed, so that a restart keeps the URL). */
export async function startNpmStartProcess(
  environment: NodeJS.ProcessEnv,
): Promise<NpmStartProcess> {
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let printed = '';
  const signal = async (name: NodeJS.Signals) => {
    const running = child;
    if (running?.pid === undefined || running.exitCode !== null) return;
    try {
      process.kill(-running.pid, name);
    } catch {
      // Gone already.
    }
    await exited;
  };
  const start = async () => {
    const started = spawn('npm', ['start', '--silent', '--prefix', repositoryRoot], {
      cwd: repositoryRoot,
      env: environment,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    child = started;
    exited = new Promise((resolve) => started.once('exit', () => resolve()));
    let output = '';
    const keep = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      printed = (printed + chunk.toString('utf8')).slice(-50_000);
    };
    started.stdout?.on('data', keep);
    started.stderr?.on('data', keep);
    // A busy machine may take long to start a Node.js process: no deadline but its exit.
    while (!/API: +http:\/\/127\.0\.0\.1:\d+/.test(output)) {
      if (started.exitCode !== null) throw new Error(`npm start did not start:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  await start();
  return {
    url: `http://127.0.0.1:${environment.PORT}`,
    start,
    kill: () => signal('SIGKILL'),
    stop: () => signal('SIGINT'),
    output: () => printed,
  };
}
