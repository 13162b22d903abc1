/**
 * An emulator as a child process under a small `sh` guard whose stdin is a pipe from this
 * process: however this process ends, the pipe closes and the guard stops the server (SIGTERM),
 * so no test leaves one running. moto's server and MiniStack run this way.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';

export interface GuardedServer {
  /** What the server printed, the last 20,000 characters (empty unless `keepOutput`). */
  output(): string;
  /** Stops the server and waits until it has exited. */
  stop(): Promise<void>;
}

export interface GuardedServerOptions {
  /** Named in the error when it does not answer. */
  readonly name: string;
  /** The server's command and its arguments. */
  readonly command: readonly string[];
  readonly environment?: NodeJS.ProcessEnv;
  /** Answers 2xx once the server is ready. */
  readonly healthUrl: string;
  readonly readyTimeoutMilliseconds: number;
  readonly pollMilliseconds: number;
  /** Keep what it prints, for `output()` and the error; otherwise it goes nowhere. */
  readonly keepOutput?: boolean;
  /**
   * In a process group of its own: a terminal's Ctrl-C to the starter's group does not reach it,
   * and it stops when the starter stops it (or exits), after what still uses it.
   */
  readonly ownGroup?: boolean;
  /** What `stop()` sends it: `KILL` for a server whose graceful stop is slow and keeps nothing. */
  readonly stopSignal?: 'TERM' | 'KILL';
}

const guardScript = `
"$@" </dev/null &
child=$!
trap 'kill "$child" 2>/dev/null; wait "$child"; exit 0' TERM INT HUP
read -r _
kill -s "$GUARD_STOP_SIGNAL" "$child" 2>/dev/null
wait "$child"
`;

/** Starts the server and waits until `healthUrl` answers; stops it and rejects if it does not. */
export async function startGuardedServer(options: GuardedServerOptions): Promise<GuardedServer> {
  const output = options.keepOutput ? 'pipe' : 'ignore';
  const guard: ChildProcess = spawn(
    'sh',
    ['-c', guardScript, `${options.name}-guard`, ...options.command],
    {
      env: {
        ...(options.environment ?? process.env),
        GUARD_STOP_SIGNAL: options.stopSignal ?? 'TERM',
      },
      stdio: ['pipe', output, output],
      detached: options.ownGroup === true,
    },
  );
  let printed = '';
  const keep = (chunk: Buffer) => {
    printed = (printed + chunk.toString('utf8')).slice(-20_000);
  };
  guard.stdout?.on('data', keep);
  guard.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => guard.once('exit', () => resolve()));
  const server = {
    output: () => printed,
    stop: async () => {
      guard.stdin?.end();
      await exited;
    },
  };
  const deadline = Date.now() + options.readyTimeoutMilliseconds;
  for (;;) {
    try {
      const response = await fetch(options.healthUrl);
      await response.body?.cancel();
      if (response.ok) return server;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline || guard.exitCode !== null) {
      await server.stop();
      const seconds = options.readyTimeoutMilliseconds / 1000;
      throw new Error(
        `${options.name} did not answer on ${options.healthUrl} within ${seconds} s${printed ? `:\n${printed}` : ''}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, options.pollMilliseconds));
  }
}

/** A port nothing listens on now, on `host`. */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null
          ? resolve(address.port)
          : reject(new Error('no free port')),
      );
    });
  });
}
