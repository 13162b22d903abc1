/**
 * The Plant Store in a real browser (Debian's Chromium, headless, through playwright-core) against
 * `npm start`'s program as a child process: the API reference page, and the example page using
 * `@plant-store/client` from another origin (CORS, exact ids, ETags, `Link`, a readable 401).
 * `.ci/run` installs Chromium (`.ci/browser`); without it this suite fails saying how.
 *
 * @services dynamodb-local
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { build } from 'esbuild';
import { type Browser, chromium, type Page } from 'playwright-core';
import { loadOrCreateLocalKeys, signLocalToken } from '../../local/token-issuer.ts';
import { operations } from '../api/openapi.ts';
import { testStoreUrl } from '../support/test-store.ts';

/** The globals of the functions below that run in the page (page.evaluate), not in Node.js. */
interface PageApi {
  readonly client: {
    create(plant: object): Promise<unknown>;
    get(id: bigint): Promise<unknown>;
    patch(id: bigint, patch: object): Promise<{ id: bigint; tag?: string }>;
    list(options: object): AsyncIterable<{ id: bigint }>;
    etagOf(id: bigint): string | undefined;
  };
  showPlants(): Promise<void>;
}
declare const window: { readonly plantStore: PageApi };
declare const document: {
  querySelectorAll(selector: string): Iterable<{
    readonly textContent: string | null;
    getAttribute(name: string): string | null;
  }>;
};

const repositoryRoot = new URL('../..', import.meta.url).pathname;
const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const exampleDirectory = join(repositoryRoot, 'clients/typescript/examples/browser');

let dataDirectory: string;
let apiProcess: ChildProcess | undefined;
let apiUrl: string;
let pageServer: Server | undefined;
let pagePort: number;
let browser: Browser | undefined;
let token: string;
let expiredToken: string;

/** Starts `local/start.ts` on a free port (on the test store: no JVM of its own) and waits. */
async function startApi(): Promise<string> {
  const child = spawn(process.execPath, [join(repositoryRoot, 'local/start.ts')], {
    cwd: dataDirectory,
    env: {
      ...process.env,
      PORT: '0',
      PLANT_STORE_DATA_DIR: join(dataDirectory, 'data'),
      DYNAMODB_ENDPOINT: testStoreUrl(),
      TABLE_NAME: `plants-browser-${process.pid}-${Date.now()}`,
      THROTTLING: 'off',
      // Pages on localhost may call it; the same page on 127.0.0.1 may not.
      CORS_ORIGINS: 'http://localhost:*',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  apiProcess = child;
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const deadline = Date.now() + 120_000;
  while (!/^curl /m.test(output)) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`No banner:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return (/API: +(http:\/\/127\.0\.0\.1:\d+)/.exec(output) as RegExpExecArray)[1] as string;
}

/** Serves the example page and the client bundled for browsers, on 127.0.0.1. */
async function startPageServer(): Promise<number> {
  const bundle = await build({
    entryPoints: [join(repositoryRoot, 'clients/typescript/src/index.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
  });
  const files = new Map<string, Buffer>([
    ['/', readFileSync(join(exampleDirectory, 'index.html'))],
    ['/app.js', readFileSync(join(exampleDirectory, 'app.js'))],
    ['/plant-store-client.js', Buffer.from(bundle.outputFiles[0]?.contents ?? [])],
  ]);
  const types: Record<string, string> = { '.js': 'text/javascript', '': 'text/html' };
  pageServer = createServer((request, response) => {
    const path = (request.url ?? '/').split('?', 1)[0] as string;
    const file = files.get(path);
    if (file === undefined) return response.writeHead(404).end();
    response.writeHead(200, { 'Content-Type': `${types[extname(path)]}; charset=utf-8` });
    response.end(file);
  });
  await new Promise<void>((resolve) => pageServer?.listen(0, '127.0.0.1', resolve));
  return (pageServer.address() as AddressInfo).port;
}

beforeAll(async () => {
  if (!existsSync(chromiumPath)) {
    throw new Error(
      `Chromium is not installed at ${chromiumPath}: run \`bash .ci/browser\` (Debian's chromium package) or set CHROMIUM_PATH.`,
    );
  }
  dataDirectory = mkdtempSync(join(tmpdir(), 'plant-store-browser-'));
  [apiUrl, pagePort] = await Promise.all([startApi(), startPageServer()]);
  const keys = loadOrCreateLocalKeys(join(dataDirectory, 'data', 'keys'));
  token = signLocalToken(keys);
  expiredToken = signLocalToken(keys, { expiresInSeconds: -120 });
  // As root (CI), Chromium's sandbox cannot start; the pages are our own.
  browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (pageServer ? pageServer.close(resolve) : resolve(undefined)));
  if (apiProcess !== undefined && apiProcess.exitCode === null) {
    const exited = new Promise((resolve) => apiProcess?.once('exit', resolve));
    apiProcess.kill('SIGTERM');
    await exited;
  }
  if (dataDirectory !== undefined) rmSync(dataDirectory, { recursive: true, force: true });
});

/** A new page that records every request the page makes to a host other than this machine. */
async function openPage(url: string): Promise<{ page: Page; foreign: string[] }> {
  const page = await (browser as Browser).newPage();
  const foreign: string[] = [];
  page.on('request', (request) => {
    const { hostname } = new URL(request.url());
    if (!['127.0.0.1', 'localhost'].includes(hostname) && !request.url().startsWith('data:')) {
      foreign.push(request.url());
    }
  });
  await page.goto(url);
  return { page, foreign };
}

describe('the API reference at /docs', () => {
  it('renders every operation (the webhook endpoints\u2019 too) and the webhooks from openapi.yaml, fetching nothing from elsewhere', async () => {
    const { page, foreign } = await openPage(`${apiUrl}/docs`);
    try {
      // Every operation of the document, the webhook endpoints' in their own group.
      await page.getByText('Add a plant').first().waitFor({ timeout: 20_000 });
      const group = page.getByRole('button', { name: 'Open Group - webhook-endpoints' });
      if ((await group.count()) > 0) await group.click();
      for (const { operation } of operations) {
        await page
          .getByText(operation.summary ?? '', { exact: true })
          .first()
          .waitFor({ timeout: 20_000 });
      }
      await page.getByRole('button', { name: 'Open Group - Webhooks' }).click();
      for (const summary of ['A plant was stored', 'A plant was changed', 'A plant was deleted']) {
        await page.getByText(summary).first().waitFor({ timeout: 10_000 });
      }
      expect(foreign).toEqual([]);
    } finally {
      await page.close();
    }
  }, 180_000);

  it('offers none of the renderer’s hosted features, only "try it" and the download', async () => {
    const { page, foreign } = await openPage(`${apiUrl}/docs`);
    try {
      await page.getByText('Add a plant').first().waitFor({ timeout: 20_000 });
      await page.locator('button', { hasText: 'Test Request' }).first().waitFor();
      await page.locator('button', { hasText: 'Download OpenAPI Document' }).first().waitFor();
      const offered = await page.evaluate(() =>
        [...document.querySelectorAll('button, a, [role="button"], [role="menuitem"]')].map(
          (element) => ({
            text: (element.textContent ?? '').trim(),
            href: element.getAttribute('href'),
          }),
        ),
      );
      const hosted = /Ask AI|MCP|Deploy|Share|Developer Tools|Configure|VS Code|Cursor|API Client/i;
      expect(offered.filter(({ text }) => hosted.test(text))).toEqual([]);
      // Links stay on the page; the one exception is the renderer's credit, a plain link.
      expect(
        offered.filter(
          ({ href }) => href !== null && !href.startsWith('#') && href !== 'https://www.scalar.com',
        ),
      ).toEqual([]);
      expect(foreign).toEqual([]);
    } finally {
      await page.close();
    }
  }, 180_000);

  it('creates a plant with its "try it", with the token pasted in', async () => {
    const { page, foreign } = await openPage(`${apiUrl}/docs`);
    try {
      await page.getByPlaceholder('Token').first().fill(token);
      // The first operation, POST /plants; its request body is the document's first example.
      await page.locator('button', { hasText: 'Test Request' }).first().click();
      const [sent] = await Promise.all([
        page.waitForResponse(
          (response) =>
            response.request().method() === 'POST' && response.url() === `${apiUrl}/plants`,
          { timeout: 20_000 },
        ),
        page.getByRole('button', { name: 'Send' }).first().click(),
      ]);
      expect(sent.status()).toBe(200);
      const stored = await fetch(`${apiUrl}/plants/10`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      expect(await stored.text()).toBe('{"id":10,"name":"Monstera","tag":"tropical"}');
      expect(foreign).toEqual([]);
    } finally {
      await page.close();
    }
  }, 180_000);
});

describe('the example page, from another origin', () => {
  const exampleUrl = (origin: string, pageToken = token) =>
    `${origin}:${pagePort}/?api=${encodeURIComponent(apiUrl)}&token=${encodeURIComponent(pageToken)}`;

  it('creates, lists (exact 19-digit ids) and changes plants, reading ETag and Link', async () => {
    const { page, foreign } = await openPage(exampleUrl('http://localhost'));
    try {
      const result = await page.evaluate(async () => {
        const { client, showPlants } = window.plantStore;
        const ids = [9223372036854775807n, -9223372036854775808n, 9007199254740993n];
        for (const id of ids) await client.create({ id, name: `Plant ${id}` });
        const etag = client.etagOf(ids[0] as bigint);
        const changed = await client.patch(ids[0] as bigint, { tag: 'shade' });
        await showPlants();
        return {
          listed: [...document.querySelectorAll('#plants li')].map((item) => item.textContent),
          changedId: String(changed.id),
          etagChanged: etag !== undefined && etag !== client.etagOf(ids[0] as bigint),
        };
      });
      expect(result.changedId).toBe('9223372036854775807');
      expect(result.etagChanged).toBe(true);
      expect(result.listed).toEqual(
        expect.arrayContaining([
          '9223372036854775807: Plant 9223372036854775807 (shade)',
          '-9223372036854775808: Plant -9223372036854775808',
          '9007199254740993: Plant 9007199254740993',
        ]),
      );
      expect(foreign).toEqual([]);
    } finally {
      await page.close();
    }
  }, 180_000);

  it('follows Link across pages in the browser, every plant once', async () => {
    const { page } = await openPage(exampleUrl('http://localhost'));
    try {
      const { created, listed } = await page.evaluate(async () => {
        const { client } = window.plantStore;
        const ids = Array.from({ length: 12 }, (_, index) => 1000n + BigInt(index));
        for (const id of ids) await client.create({ id, name: `Paged ${id}` });
        const seen: string[] = [];
        for await (const plant of client.list({ limit: 5 })) seen.push(String(plant.id));
        return { created: ids.map(String), listed: seen };
      });
      expect(new Set(listed).size).toBe(listed.length);
      expect(listed).toEqual(expect.arrayContaining(created));
    } finally {
      await page.close();
    }
  }, 180_000);

  it('cannot read the API from an origin it does not allow: the browser refuses what the same page reads when allowed', async () => {
    const pageTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const readFrom = async (origin: string) => {
      const { page } = await openPage(exampleUrl(origin));
      try {
        return await page.evaluate(
          async ({ url, bearer, traceparent }) => {
            try {
              // A page in a trace of its own: the preflight allows traceparent, and the page may
              // read the answer's traceresponse.
              const response = await fetch(`${url}/plants?limit=1`, {
                headers: { Authorization: `Bearer ${bearer}`, traceparent },
              });
              const traceId = response.headers.get('traceresponse')?.split('-')[1];
              return `read ${response.status} in ${traceId}`;
            } catch (error) {
              return (error as Error).name;
            }
          },
          { url: apiUrl, bearer: token, traceparent: `00-${pageTrace}-00f067aa0ba902b7-01` },
        );
      } finally {
        await page.close();
      }
    };
    expect(await readFrom('http://localhost')).toBe(`read 200 in ${pageTrace}`);
    // The same request from 127.0.0.1, which CORS_ORIGINS leaves out: the preflight answers
    // without Access-Control-Allow-Origin, and the browser refuses to send it.
    expect(await readFrom('http://127.0.0.1')).toBe('TypeError');
  }, 180_000);

  it('reads the 401 of an expired token, with its code and request id', async () => {
    const { page } = await openPage(exampleUrl('http://localhost', expiredToken));
    try {
      const failure = await page.evaluate(async () => {
        const { client } = window.plantStore;
        try {
          await client.get(1n);
          return undefined;
        } catch (error) {
          const { status, error: code, message, requestId } = error as Record<string, unknown>;
          return { status, code, message, requestId };
        }
      });
      expect(failure).toEqual({
        status: 401,
        code: 40100,
        message: 'A valid bearer token is required.',
        requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      });
    } finally {
      await page.close();
    }
  }, 180_000);
});
