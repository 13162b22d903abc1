/**
 * `npm start` as a developer runs it: a child process that starts DynamoDB Local with a data
 * folder, prints a curl that works, keeps the data across restarts, and on SIGTERM exits 0
 * leaving no JVM behind.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { isProcessRunning } from '../support/processes.ts';

const startScript = new URL('../../local/start.ts', import.meta.url).pathname;

interface StartedCli {
  readonly child: ChildProcess;
  readonly curl: string;
  readonly jvmPid: number;
  readonly exited: Promise<number | null>;
}

const children: ChildProcess[] = [];
let dataDirectory: string;

/** Runs `node local/start.ts` on a free port and waits for its banner. */
async function startCli(): Promise<StartedCli> {
  const child = spawn(process.execPath, [startScript], {
    // Outside the repository, so nothing the run writes lands in the work tree.
    cwd: dataDirectory,
    env: { ...process.env, PORT: '0', PLANT_STORE_DATA_DIR: join(dataDirectory, 'data') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const banner = await new Promise<string>((resolve, reject) => {
    const check = setInterval(() => {
      if (/^curl .*$/m.test(output)) finish(() => resolve(output));
    }, 50);
    const timeout = setTimeout(
      () => finish(() => reject(new Error(`No banner:\n${output}`))),
      25_000,
    );
    void exited.then((code) => finish(() => reject(new Error(`Exited ${code}:\n${output}`))));
    function finish(settle: () => void) {
      clearInterval(check);
      clearTimeout(timeout);
      settle();
    }
  });
  return {
    child,
    curl: (/^curl .*$/m.exec(banner) as RegExpExecArray)[0],
    jvmPid: Number((/\(pid (\d+)\)/.exec(banner) as RegExpExecArray)[1]),
    exited,
  };
}

/** Runs the printed curl in a shell, as pasted, and returns the HTTP status and body. */
async function runCurl(command: string): Promise<{ status: number; body: string }> {
  const { stdout } = await promisify(execFile)('sh', ['-c', `${command} -s`]);
  const [head = '', body = ''] = stdout.split(/\r?\n\r?\n/);
  return { status: Number(head.split(' ')[1]), body };
}

async function stopCli(cli: StartedCli): Promise<void> {
  cli.child.kill('SIGTERM');
  expect(await cli.exited).toBe(0);
  expect(isProcessRunning(cli.jvmPid)).toBe(false);
}

beforeAll(async () => {
  dataDirectory = await mkdtemp(join(tmpdir(), 'plant-store-npm-start-'));
});

afterAll(async () => {
  // Only when a test failed midway: never leave a child behind.
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await rm(dataDirectory, { recursive: true, force: true });
});

describe('npm start', () => {
  it('answers the printed curl, keeps the data across a restart, and stops on SIGTERM', async () => {
    const first = await startCli();
    expect(isProcessRunning(first.jvmPid)).toBe(true);
    const created = await runCurl(first.curl);
    expect(created).toEqual({ status: 200, body: '{"name":"Monstera","tag":"tropical"}' });
    await stopCli(first);

    const second = await startCli();
    // Same id, other content: a 40009 shows the first run's plant is still stored.
    const conflicting = await runCurl(second.curl.replace('"Monstera"', '"Not a monstera"'));
    expect(conflicting.status).toBe(400);
    expect(JSON.parse(conflicting.body)).toMatchObject({ error: 40009 });
    await stopCli(second);
  });
});
