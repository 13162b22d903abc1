/**
 * `npm run emulator -- --stage dev` as a user runs it: a child process that synthesizes, deploys
 * onto MiniStack with the CDK CLI and prints a curl; the curl, run as printed, answers; a SIGTERM
 * to `npm` alone destroys the stack and stops the emulator, leaving nothing running.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createConnection } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, expect, it } from '@jest/globals';
import { repositoryRoot } from '../../infra/plant-store-function.ts';
import { recordAwsCalls } from '../permissions/recordings.ts';

const run = promisify(execFile);
let emulator: ChildProcess | undefined;
let output = '';

afterAll(() => {
  // A failed test leaves nothing behind: the whole group, npm, node and MiniStack.
  if (emulator?.pid !== undefined && emulator.exitCode === null) {
    process.kill(-emulator.pid, 'SIGKILL');
  }
});

function printed(pattern: RegExp, timeoutMilliseconds: number): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`Not printed in time: ${pattern}\n${output.slice(-3000)}`)),
      timeoutMilliseconds,
    );
    const check = () => {
      const match = pattern.exec(output);
      if (match === null) return;
      clearTimeout(timer);
      emulator?.stdout?.off('data', check);
      resolve(match);
    };
    // A command that ended without printing it fails the test at once, with what it said.
    emulator?.once('exit', (code) => {
      check();
      clearTimeout(timer);
      reject(new Error(`Exited (${code}) without printing ${pattern}\n${output.slice(-3000)}`));
    });
    emulator?.stdout?.on('data', check);
    check();
  });
}

function isListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

it('deploys the stage, prints a curl that answers, and destroys it all on a SIGTERM to npm', async () => {
  // What the command asks of AWS, for the permissions tier.
  const recording = recordAwsCalls('emulator');
  emulator = spawn('npm', ['run', '-s', 'emulator', '--', '--stage', 'dev'], {
    cwd: repositoryRoot,
    env: { ...process.env, PLANT_STORE_AWS_CALLS: recording },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const collect = (chunk: Buffer) => {
    output += chunk.toString('utf8');
  };
  emulator.stdout?.on('data', collect);
  emulator.stderr?.on('data', collect);
  const exited = new Promise<number | null>((resolve) => emulator?.once('exit', resolve));

  const [, port] = await printed(/MiniStack on http:\/\/127\.0\.0\.1:(\d+)/, 120_000);
  const [, curl] = await printed(
    /\n {2}(curl -H "Authorization: Bearer [^"]+" \S+\/plants)\n/,
    600_000,
  );
  expect(output).toMatch(/ApiKeyRequired removed \(MiniStack reads API keys/);
  const { stdout } = await run('sh', ['-c', `${curl} -s -w '\\n%{http_code}'`]);
  expect(stdout.trim().split('\n').at(-1)).toBe('200');

  emulator.kill('SIGTERM');
  expect(await exited).toBe(0);
  expect(output).toMatch(
    /SIGTERM: destroying PlantStore-dev and stopping the emulator…\nStopped\.\n$/,
  );
  expect(await isListening(Number(port))).toBe(false);
}, 900_000);
