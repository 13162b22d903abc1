/**
 * Starts `local-api-process.ts` as a child process and talks to it: its URL, its pid, its output
 * lines, tokens its authorizer accepts, and a stop that waits for the exit.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type LocalKeys,
  type LocalTokenOptions,
  loadOrCreateLocalKeys,
  signLocalToken,
} from '../../local/token-issuer.ts';

const entry = new URL('./local-api-process.ts', import.meta.url).pathname;
const readyTimeoutMilliseconds = 20_000;

export interface ApiProcessOptions {
  readonly storeUrl: string;
  readonly tableName: string;
  /**
   * Each method's throttling, and then no per-client limit; the `dev` stage's shares (10 per
   * second, bursts of 20) and per-client limits when absent.
   */
  readonly throttling?: { readonly rateLimit: number; readonly burstLimit: number };
}

export interface ApiProcess {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly pid: number;
  /** The local issuer's key pair, for signing tokens of any shape. */
  readonly keys: LocalKeys;
  /** Every line the process wrote so far, stdout and stderr. */
  readonly outputLines: readonly string[];
  /** A token the authorizer accepts (or refuses, per the options). */
  signToken(options?: LocalTokenOptions): string;
  /** Whether the process is still alive (it did not crash). */
  isRunning(): boolean;
  /** Closes its stdin, which makes it stop, and resolves with its exit code (idempotent). */
  stop(): Promise<number | null>;
}

/** Throttling too generous to matter: for suites that measure the API and the store, not the bill protection. */
export const unthrottled = { rateLimit: 1_000_000, burstLimit: 1_000_000 } as const;

/** Starts the local API process on a free port, with its own key pair in a temporary folder. */
export async function startApiProcess(options: ApiProcessOptions): Promise<ApiProcess> {
  const keysDirectory = await mkdtemp(join(tmpdir(), 'plant-store-reliability-keys-'));
  const keys = loadOrCreateLocalKeys(keysDirectory);
  const { throttling } = options;
  const child = spawn(process.execPath, [entry], {
    cwd: tmpdir(),
    env: {
      ...process.env,
      DYNAMODB_ENDPOINT: options.storeUrl,
      TABLE_NAME: options.tableName,
      KEYS_DIRECTORY: keysDirectory,
      THROTTLING:
        throttling === undefined ? '' : `${throttling.rateLimit}/${throttling.burstLimit}`,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const outputLines = collectLines(child);
  const stop = createStop(child, exited, keysDirectory);
  try {
    const url = await waitForUrl(outputLines, exited);
    return {
      url,
      pid: child.pid as number,
      keys,
      outputLines,
      signToken: (tokenOptions) => signLocalToken(keys, tokenOptions),
      isRunning: () => child.exitCode === null && child.signalCode === null,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

function createStop(child: ChildProcess, exited: Promise<number | null>, keysDirectory: string) {
  let stopping: Promise<number | null> | undefined;
  return () => {
    stopping ??= (async () => {
      child.stdin?.end();
      // A process that does not stop in time is killed: no child outlives the test.
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      const code = await exited;
      clearTimeout(timer);
      await rm(keysDirectory, { recursive: true, force: true });
      return code;
    })();
    return stopping;
  };
}

function collectLines(child: ChildProcess): string[] {
  const lines: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    let pending = '';
    stream?.on('data', (chunk: Buffer) => {
      const parts = (pending + chunk.toString()).split('\n');
      pending = parts.pop() ?? '';
      lines.push(...parts);
    });
    stream?.on('end', () => {
      if (pending !== '') lines.push(pending);
    });
  }
  return lines;
}

async function waitForUrl(lines: readonly string[], exited: Promise<number | null>) {
  let exitCode: number | null | undefined;
  void exited.then((code) => {
    exitCode = code;
  });
  const deadline = Date.now() + readyTimeoutMilliseconds;
  while (Date.now() < deadline) {
    const ready = lines.find((line) => line.startsWith('{"reliabilityApiUrl"'));
    if (ready !== undefined)
      return (JSON.parse(ready) as { reliabilityApiUrl: string }).reliabilityApiUrl;
    if (exitCode !== undefined) {
      throw new Error(`The local API process exited (${exitCode}):\n${lines.join('\n')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`The local API process did not start in time:\n${lines.join('\n')}`);
}
