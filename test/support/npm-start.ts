/**
 * `npm start` as a developer runs it, in a process group of its own (so a test can stop it as a
 * terminal's Ctrl-C would, or with SIGTERM to npm alone): started, and waited for until its
 * banner's `curl` line is printed.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

export interface StartedNpmStart {
  readonly child: ChildProcess;
  /** Resolves when npm has exited. */
  readonly exited: Promise<unknown>;
  /** Everything it printed so far, both streams. */
  output(): string;
  /** The API's base URL, from the banner. */
  readonly apiUrl: string;
}

/** Starts `npm start -- <args>` in `cwd`; one that prints no banner in time is stopped. */
export async function startNpmStart(options: {
  readonly repositoryRoot: string;
  readonly cwd: string;
  readonly environment: NodeJS.ProcessEnv;
  readonly args?: readonly string[];
  readonly waitMilliseconds: number;
}): Promise<StartedNpmStart> {
  const extra = options.args === undefined ? [] : ['--', ...options.args];
  const child = spawn('npm', ['start', '--silent', '--prefix', options.repositoryRoot, ...extra], {
    cwd: options.cwd,
    env: options.environment,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let printed = '';
  const keep = (chunk: Buffer) => {
    printed += chunk.toString();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const deadline = Date.now() + options.waitMilliseconds;
  while (!/^curl /m.test(printed)) {
    if (Date.now() > deadline || child.exitCode !== null) {
      // Whatever it started stops with it: the whole group, as Ctrl-C would.
      if (child.exitCode === null && child.pid !== undefined) process.kill(-child.pid, 'SIGINT');
      await exited;
      throw new Error(`No banner:\n${printed}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const apiUrl = (
    /API: +(http:\/\/127\.0\.0\.1:\d+)/.exec(printed) as RegExpExecArray
  )[1] as string;
  return { child, exited, output: () => printed, apiUrl };
}

/** `npm run -s token -- …` for the `npm start` whose data is in `dataDirectory`/data: the token. */
export async function npmToken(
  repositoryRoot: string,
  dataDirectory: string,
  ...args: string[]
): Promise<string> {
  const { stdout } = await promisify(execFile)(
    'npm',
    ['run', '-s', 'token', '--prefix', repositoryRoot, '--', ...args],
    {
      cwd: dataDirectory,
      env: { ...process.env, PLANT_STORE_DATA_DIR: join(dataDirectory, 'data') },
    },
  );
  return stdout.trim();
}
