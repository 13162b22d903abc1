/**
 * Run by `unroutable-endpoint.e2e.test.ts` inside a network namespace of its own (loopback only,
 * `/etc/hosts` naming an IPv6-only host): starts `npm start`'s process, registers an endpoint on
 * that host (https: the TLS socket is where the error was unhandled), stores a plant, and prints
 * what followed as one JSON line. A connect to that host fails at once (ENETUNREACH), as it does
 * on a machine without IPv6 routes.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const repositoryRoot = new URL('../..', import.meta.url).pathname;
const dataDirectory = mkdtempSync(join(tmpdir(), 'plant-store-unroutable-'));
const environment = { ...process.env, PORT: '0', PLANT_STORE_DATA_DIR: dataDirectory };

let child: ChildProcess | undefined;
let output = '';
try {
  child = spawn(process.execPath, [join(repositoryRoot, 'local/start.ts')], {
    env: environment,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child?.once('exit', resolve));
  for (const stream of [child.stdout, child.stderr]) {
    stream?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
  }
  const deadline = Date.now() + 60_000;
  while (!/^curl /m.test(output)) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error('no banner');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const url = (/API: +(http:\/\/127\.0\.0\.1:\d+)/.exec(output) as RegExpExecArray)[1];
  const token = execFileSync(
    process.execPath,
    [join(repositoryRoot, 'local/token.ts'), '--scope', 'webhooks/manage plants/read plants/write'],
    { env: environment, encoding: 'utf8' },
  ).trim();
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return {
      status: response.status,
      body: (await response.json()) as Record<string, unknown> & unknown[],
    };
  };
  const registered = await call('POST', '/webhook-endpoints', {
    url: 'https://ipv6-only.example.com/hooks',
  });
  const created = await call('POST', '/plants', { id: 1, name: 'Fern' });
  let attempts: unknown[] = [];
  while (attempts.length === 0 && Date.now() < deadline && child.exitCode === null) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const listed = await call('GET', `/webhook-endpoints/${registered.body.id}/attempts`);
    attempts = Array.isArray(listed.body) ? listed.body : [];
  }
  // A second past the first attempt: the crash this guards against came about a second later.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const stillServing = child.exitCode === null ? (await call('GET', '/plants/1')).status : null;
  child.kill('SIGTERM');
  const exitCode = await exited;
  process.stdout.write(
    `${JSON.stringify({
      registered: registered.status,
      created: created.status,
      attempts,
      stillServing,
      exitCode,
      crashed: /Unhandled 'error' event/.test(output),
    })}\n`,
  );
} catch (error) {
  child?.kill('SIGKILL');
  process.stdout.write(`${JSON.stringify({ error: String(error), output })}\n`);
} finally {
  rmSync(dataDirectory, { recursive: true, force: true });
}
