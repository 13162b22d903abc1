/**
 * `npm start` as a developer runs it: a child process that starts DynamoDB Local with a data
 * folder private to the user, prints a curl that works, keeps the data across restarts, and leaves nothing running
 * however it is stopped: Ctrl-C to its process group, SIGTERM to `npm` alone (what `docker stop`,
 * systemd and IDEs do), or `npm` killed outright.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startWebhookReceiver } from '../../beds/webhook-receiver.ts';
import { isProcessRunning } from '../support/processes.ts';

const repositoryRoot = new URL('../..', import.meta.url).pathname;
const startScript = join(repositoryRoot, 'local/start.ts');
const run = promisify(execFile);

interface StartedCli {
  readonly child: ChildProcess;
  readonly curl: string;
  readonly apiPort: number;
  readonly jvmPid: number;
  readonly exited: Promise<number | null>;
  output(): string;
}

const children: ChildProcess[] = [];
let dataDirectory: string;

/**
 * Starts the local API on a free port, as `node local/start.ts` or as `npm start` (in its own
 * process group, as a terminal runs it), and waits for its banner.
 */
async function startCli(how: 'node' | 'npm', environment: Record<string, string> = {}) {
  const [command, args] =
    how === 'node'
      ? [process.execPath, [startScript]]
      : ['npm', ['start', '--silent', '--prefix', repositoryRoot]];
  const child = spawn(command, args, {
    // Outside the repository, so nothing the run writes lands in the work tree.
    cwd: dataDirectory,
    env: {
      ...process.env,
      PORT: '0',
      PLANT_STORE_DATA_DIR: join(dataDirectory, 'data'),
      ...environment,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
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
      // A wait, not a bound: a busy machine may take long to start Node.js and a JVM.
      120_000,
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
    apiPort: Number((/API: +http:\/\/127\.0\.0\.1:(\d+)/.exec(banner) as RegExpExecArray)[1]),
    jvmPid: Number((/\(pid (\d+)\)/.exec(banner) as RegExpExecArray)[1]),
    exited,
    output: () => output,
  } satisfies StartedCli;
}

/** Runs the printed curl in a shell, as pasted, and returns the HTTP status and body. */
async function runCurl(command: string): Promise<{ status: number; body: string }> {
  const { stdout } = await run('sh', ['-c', `${command} -s`]);
  const [head = '', body = ''] = stdout.split(/\r?\n\r?\n/);
  return { status: Number(head.split(' ')[1]), body };
}

/** The live processes of a process group (Linux: /proc), its leader included; zombies aside. */
function processGroupMembers(groupId: number): number[] {
  const members: number[] = [];
  for (const name of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // The command name may hold spaces and parentheses: fields start after the last ')'.
      const [state, , group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state !== 'Z' && Number(group) === groupId) members.push(Number(name));
    } catch {
      // The process ended while we looked.
    }
  }
  return members;
}

/** Resolves once nothing of the group is left, or with what is still running after `ms`. */
async function waitForGroupToEnd(groupId: number, ms = 10_000): Promise<number[]> {
  const deadline = Date.now() + ms;
  let members = processGroupMembers(groupId);
  while (members.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    members = processGroupMembers(groupId);
  }
  return members;
}

/** Every file and folder under `root` (itself included) with its permission bits. */
function privateModes(root: string): [string, number][] {
  const entries: [string, number][] = [[root, statSync(root).mode & 0o777]];
  for (const name of readdirSync(root, { recursive: true }) as string[]) {
    const file = join(root, name);
    entries.push([file, statSync(file).mode & 0o777]);
  }
  return entries;
}

/** Whether something still accepts connections on the port. */
async function isListening(port: number): Promise<boolean> {
  try {
    await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2_000) });
    return true;
  } catch {
    return false;
  }
}

beforeAll(async () => {
  dataDirectory = await mkdtemp(join(tmpdir(), 'plant-store-npm-start-'));
});

afterAll(async () => {
  // Only when a test failed midway: never leave a child behind.
  for (const child of children) {
    if (child.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  }
  await rm(dataDirectory, { recursive: true, force: true });
});

describe('npm start', () => {
  it('answers the printed curl, keeps the data across a restart, and stops on SIGTERM', async () => {
    // A data folder an earlier version left open to others: narrowed on start.
    mkdirSync(join(dataDirectory, 'data'), { mode: 0o755 });
    chmodSync(join(dataDirectory, 'data'), 0o755);
    const first = await startCli('node');
    expect(isProcessRunning(first.jvmPid)).toBe(true);
    const created = await runCurl(first.curl);
    expect(created).toEqual({ status: 200, body: '{"name":"Monstera","tag":"tropical"}' });
    // The private key and every stored plant are the user's alone.
    const modes = privateModes(join(dataDirectory, 'data'));
    expect(modes.length).toBeGreaterThanOrEqual(5); // data, keys, the key, dynamodb, its file
    for (const [file, mode] of modes) {
      expect([file, mode]).toEqual([file, statSync(file).isDirectory() ? 0o700 : 0o600]);
    }
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(isProcessRunning(first.jvmPid)).toBe(false);

    const second = await startCli('node');
    // Same id, other content: a 40009 shows the first run's plant is still stored.
    const conflicting = await runCurl(second.curl.replace('"Monstera"', '"Not a monstera"'));
    expect(conflicting.status).toBe(400);
    expect(JSON.parse(conflicting.body)).toMatchObject({ error: 40009 });
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });

  it.each([
    ['SIGTERM to npm alone (docker stop, systemd, IDEs)', 'npm-term'],
    ['Ctrl-C to the process group (a terminal)', 'group-int'],
    ['SIGKILL to npm alone', 'npm-kill'],
    ['Ctrl-\\ to the process group (SIGQUIT, which ends npm and node at once)', 'group-quit'],
  ] as const)('leaves nothing running after %s', async (_how, stop) => {
    const cli = await startCli('npm');
    const npmPid = cli.child.pid as number;
    expect(processGroupMembers(npmPid).length).toBeGreaterThanOrEqual(3); // npm, node, the JVM
    expect((await runCurl(cli.curl)).status).toBe(200);

    if (stop === 'npm-term') process.kill(npmPid, 'SIGTERM');
    if (stop === 'group-int') process.kill(-npmPid, 'SIGINT');
    if (stop === 'npm-kill') process.kill(npmPid, 'SIGKILL');
    if (stop === 'group-quit') process.kill(-npmPid, 'SIGQUIT');

    expect(await waitForGroupToEnd(npmPid)).toEqual([]);
    expect(isProcessRunning(cli.jvmPid)).toBe(false);
    expect(await isListening(cli.apiPort)).toBe(false);
    // Stopped by the signal itself, or by noticing that npm is gone, and cleanly either way;
    // a SIGQUIT ends node at once, and the store's guard stops the store.
    const reason = {
      'npm-term': 'SIGTERM',
      'group-int': 'SIGINT',
      'npm-kill': 'parent process gone',
      'group-quit': undefined,
    }[stop];
    if (reason !== undefined) {
      // (Between the two, the log lines of what was handed on before the stop.)
      expect(cli.output()).toContain(`${reason}: stopping…\n`);
      expect(cli.output()).toMatch(/\nStopped\.\n$/);
    }
  });

  it('hands on a plant stored the moment before Ctrl-C: sent, or kept in its queue and sent at the next start', async () => {
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    const receiver = await startWebhookReceiver(secret);
    try {
      // A data folder of its own: the printed curl's plant is new there, so it is an event.
      const data = join(dataDirectory, 'handed-on');
      const subscriber = {
        PLANT_STORE_DATA_DIR: data,
        WEBHOOK_URL: receiver.url,
        WEBHOOK_SECRET: secret,
      };
      const first = await startCli('npm', subscriber);
      const npmPid = first.child.pid as number;
      expect((await runCurl(first.curl)).status).toBe(200);
      process.kill(-npmPid, 'SIGINT');
      expect(await first.exited).toBe(0);
      expect(await waitForGroupToEnd(npmPid)).toEqual([]);
      // The store outlived the fan-out and the queues: nothing failed, nothing was set aside.
      expect(first.output()).not.toContain('"level":"error"');
      const setAside = join(data, 'webhooks', 'stream-failures');
      expect(existsSync(setAside) ? readdirSync(setAside) : []).toEqual([]);

      const second = await startCli('npm', subscriber);
      await receiver.waitForAccepted(1);
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
      const [delivery] = receiver.accepted().values();
      expect(delivery?.verified).toBe(true);
      expect(JSON.parse(delivery?.body ?? '{}')).toMatchObject({ name: expect.any(String) });
    } finally {
      await receiver.stop();
    }
  }, 180_000);

  it('says in one line that its store died, and stops with exit code 1, leaving nothing running', async () => {
    const cli = await startCli('node');
    const groupId = cli.child.pid as number;
    const before = cli.output().length;
    process.kill(cli.jvmPid, 'SIGKILL');
    expect(await cli.exited).toBe(1);
    expect(await waitForGroupToEnd(groupId)).toEqual([]);
    expect(await isListening(cli.apiPort)).toBe(false);
    const said = cli
      .output()
      .slice(before)
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('{'));
    expect(said).toEqual([
      expect.stringMatching(
        new RegExp(
          `^DynamoDB Local \\(pid ${cli.jvmPid}\\) stopped on its own \\(DynamoDB Local exited with status 137\\): the Plant Store stops too`,
        ),
      ),
    ]);
  });

  it.each([
    [{ PORT: ' 80' }, 'PORT must be a port number from 0 to 65535, got " 80".'],
    [{ PORT: '3000x' }, 'PORT must be a port number from 0 to 65535, got "3000x".'],
    [{ DYNAMODB_ENDPOINT: 'notaurl' }, 'DYNAMODB_ENDPOINT must be an http(s) URL'],
    [{ THROTTLING: 'staging' }, 'THROTTLING must be a stage (dev, prod) or off, got "staging".'],
    [
      { WEBHOOK_ENDPOINT_URLS: 'public' },
      'WEBHOOK_ENDPOINT_URLS must be local (http and loopback allowed) or deployed (https, public only), got "public".',
    ],
  ])('refuses %j with one line naming the setting, exit code 1', async (environment, message) => {
    const result = await run(process.execPath, [startScript], {
      cwd: dataDirectory,
      env: { ...process.env, PLANT_STORE_DATA_DIR: join(dataDirectory, 'data'), ...environment },
    }).catch((error: { code: number; stdout: string; stderr: string }) => error);
    expect(result).toMatchObject({ code: 1, stdout: '' });
    const { stderr } = result as { stderr: string };
    expect(stderr.split('\n')).toEqual([expect.stringContaining(message), '']);
    expect(stderr).toMatch(/^Could not start the Plant Store locally: /);
  });
});
