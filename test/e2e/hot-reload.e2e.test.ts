/**
 * Hot reload as a developer meets it: `npm start`'s process running from a copy of the
 * repository, a shared module edited and saved, and the next request answered by the new code,
 * with the store (and what it holds) untouched and one log line saying what reloaded. A save that
 * does not compile leaves the previous code answering, and says so.
 *
 * @services dynamodb-local
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { testStoreUrl } from '../support/test-store.ts';

const repositoryRoot = new URL('../..', import.meta.url).pathname;
const errorCodesFile = 'functions/shared/errors/error-codes.ts';

let copy: string;
let child: ChildProcess | undefined;
let output = '';
let url: string;
let token: string;

beforeAll(async () => {
  copy = await mkdtemp(join(tmpdir(), 'plant-store-hot-reload-'));
  for (const entry of ['functions', 'local', 'infra', 'openapi.yaml', 'package.json']) {
    await cp(join(repositoryRoot, entry), join(copy, entry), { recursive: true });
  }
  await symlink(join(repositoryRoot, 'node_modules'), join(copy, 'node_modules'));
  child = spawn(process.execPath, ['local/start.ts'], {
    cwd: copy,
    env: {
      ...process.env,
      PORT: '0',
      DYNAMODB_ENDPOINT: testStoreUrl(),
      TABLE_NAME: `plants-hot-reload-${process.pid}-${Date.now()}`,
      PLANT_STORE_DATA_DIR: join(copy, '.data'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  await until(() => /^curl .*$/m.test(output), 30_000, 'the banner');
  url = (/API: +(http:\/\/127\.0\.0\.1:\d+)/.exec(output) as RegExpExecArray)[1] as string;
  token = (/Authorization: Bearer ([^']+)'/.exec(output) as RegExpExecArray)[1] as string;
}, 180_000);

afterAll(async () => {
  if (child?.exitCode === null) {
    const exited = new Promise((resolve) => child?.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  await rm(copy, { recursive: true, force: true });
});

/** Polls `check` until it holds; fails naming `what` after `milliseconds`. */
async function until(check: () => boolean, milliseconds: number, what: string): Promise<void> {
  const deadline = Date.now() + milliseconds;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`No ${what}:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const request = async (method: string, path: string, body?: string) => {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

/** The log lines saying a reload happened (or failed), parsed. */
const reloadLines = () =>
  output
    .split('\n')
    .filter((line) => line.includes('the functions'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/** Saves the error codes' module with `edit` applied to its text. */
async function saveEdited(edit: (text: string) => string): Promise<void> {
  const file = join(copy, errorCodesFile);
  await writeFile(file, edit(await readFile(file, 'utf8')));
}

it('answers the next request with a saved change, keeping the data, in one log line', async () => {
  expect((await request('POST', '/plants', '{"id":5,"name":"Kept"}')).status).toBe(200);
  expect(await request('GET', '/plants/404')).toEqual({
    status: 404,
    body: { error: 40401, message: 'No plant with this id.' },
  });

  await saveEdited((text) => text.replace("'No plant with this id.'", "'Nothing stored there.'"));
  await until(() => reloadLines().length === 1, 10_000, 'reload line');
  const [line] = reloadLines();
  expect(line).toMatchObject({
    level: 'info',
    message: 'reloaded the functions',
    changed: [errorCodesFile],
    // The gateway's own answers were made from it at start: the line says so.
    restartFor: [errorCodesFile],
  });
  console.info(`hot reload: ${line?.milliseconds} ms from the save's settling to the new code`);

  expect(await request('GET', '/plants/404')).toEqual({
    status: 404,
    body: { error: 40401, message: 'Nothing stored there.' },
  });
  expect(await request('GET', '/plants/5')).toMatchObject({ status: 200, body: { name: 'Kept' } });
}, 180_000);

it('reloads a function of its own without a word about restarting', async () => {
  const before = reloadLines().length;
  const file = join(copy, 'functions/get-plant/create-handler.ts');
  await writeFile(file, `${await readFile(file, 'utf8')}\n// saved again\n`);
  await until(() => reloadLines().length === before + 1, 10_000, 'reload line');
  expect(reloadLines().at(-1)).toEqual(
    expect.not.objectContaining({ restartFor: expect.anything() }),
  );
  expect(reloadLines().at(-1)).toMatchObject({
    changed: ['functions/get-plant/create-handler.ts'],
  });
}, 180_000);

it('keeps the previous code answering when a save does not load, and says so', async () => {
  const before = reloadLines().length;
  await saveEdited((text) => `${text}\nexport const broken = ;\n`);
  await until(() => reloadLines().length === before + 1, 10_000, 'failed reload line');
  expect(reloadLines().at(-1)).toMatchObject({
    level: 'error',
    message: 'could not reload the functions; the previous code still answers',
    changed: [errorCodesFile],
  });
  expect((await request('GET', '/plants/404')).body.message).toBe('Nothing stored there.');

  await saveEdited((text) => text.replace('\nexport const broken = ;\n', ''));
  await until(() => reloadLines().length === before + 2, 10_000, 'reload line after the fix');
  expect(reloadLines().at(-1)).toMatchObject({ level: 'info' });
  expect((await request('GET', '/plants/404')).body.message).toBe('Nothing stored there.');
}, 180_000);
