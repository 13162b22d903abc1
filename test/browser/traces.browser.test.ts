/**
 * `npm start -- --traces` as a developer runs it: the viewer (Jaeger v2, built once by
 * `.ci/jaeger`) starts beside the API, the functions send it their spans, and its query API
 * returns one request's trace: the authorizer, the function and its store calls under API
 * Gateway's X-Ray trace, or the client's own; the fan-out linked to it; the delivery and its
 * attempt in the same trace as the receiver's `traceparent`. The viewer's page, in Debian's
 * Chromium, draws that trace and follows the delivery's link to the fan-out's. SIGTERM to npm
 * stops the viewer too.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Browser, chromium, type Page } from 'playwright-core';
import { startWebhookReceiver, type WebhookReceiver } from '../../beds/webhook-receiver.ts';
import { npmToken, startNpmStart } from '../support/npm-start.ts';

const repositoryRoot = new URL('../..', import.meta.url).pathname;

let dataDirectory: string;
let npmStart: ChildProcess | undefined;
let exited: Promise<unknown>;
let apiUrl: string;
let viewerUrl: string;
let hooks: WebhookReceiver | undefined;
let browser: Browser | undefined;
const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** `npm run -s token -- …`, as a developer runs it. */
const token = (...args: string[]) => npmToken(repositoryRoot, dataDirectory, ...args);

interface ViewerSpan {
  readonly spanID: string;
  readonly operationName: string;
  readonly processID: string;
  readonly references: readonly { refType: string; traceID: string; spanID: string }[];
  readonly tags: readonly { key: string; value: unknown }[];
}

/** The trace's spans as the viewer's API returns them, with their function's name. */
async function viewerTrace(traceId: string) {
  const response = await fetch(`${viewerUrl}/api/traces/${traceId}`);
  if (response.status === 404) return [];
  const { data } = (await response.json()) as {
    data: { spans: ViewerSpan[]; processes: Record<string, { serviceName: string }> }[];
  };
  return (data[0]?.spans ?? []).map((span) => ({
    ...span,
    service: data[0]?.processes[span.processID]?.serviceName,
    kind: span.tags.find((tag) => tag.key === 'span.kind')?.value,
  }));
}

/** Waits until the trace holds a span `found` accepts: spans arrive as each invocation ends. */
async function waitForSpan(
  traceId: string,
  found: (span: ViewerSpan & { service?: string }) => boolean,
) {
  for (const deadline = Date.now() + 20_000; ; ) {
    const spans = await viewerTrace(traceId);
    if (spans.some(found)) return spans;
    if (Date.now() > deadline) throw new Error(`Not in trace ${traceId}: ${JSON.stringify(spans)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

beforeAll(async () => {
  if (!existsSync(chromiumPath)) {
    throw new Error(
      `Chromium is not installed at ${chromiumPath}: run \`bash .ci/browser\` (Debian's chromium package) or set CHROMIUM_PATH.`,
    );
  }
  dataDirectory = await mkdtemp(join(tmpdir(), 'plant-store-traces-'));
  // A wait, not a bound: the first --traces on a machine builds the viewer (minutes).
  const started = await startNpmStart({
    repositoryRoot,
    cwd: dataDirectory,
    environment: {
      ...process.env,
      PORT: '0',
      PLANT_STORE_DATA_DIR: join(dataDirectory, 'data'),
      THROTTLING: 'off',
    },
    args: ['--traces'],
    waitMilliseconds: 1_200_000,
  });
  ({ child: npmStart, exited, apiUrl } = started);
  viewerUrl = (
    /Traces: +Jaeger at (http:\/\/127\.0\.0\.1:\d+)/.exec(started.output()) as RegExpExecArray
  )[1] as string;
}, 1_260_000);

afterAll(async () => {
  await browser?.close();
  await hooks?.stop();
  // SIGTERM to npm alone: it stops the API, the store and the viewer.
  if (npmStart?.exitCode === null) {
    npmStart.kill('SIGTERM');
    await exited;
  }
  if (viewerUrl !== undefined) {
    await expect(fetch(`${viewerUrl}/api/services`)).rejects.toThrow();
  }
  await rm(dataDirectory, { recursive: true, force: true });
});

describe('npm start -- --traces', () => {
  it('shows a request’s trace in the viewer, from the client to the webhook receiver', async () => {
    const [owner, plants] = await Promise.all([
      token('--scope', 'webhooks/manage plants/read', '--subject', 'client-viewer'),
      token('--subject', 'traced-client'),
    ]);
    hooks = await startWebhookReceiver(`whsec_${randomBytes(32).toString('base64')}`);
    const endpoint = await fetch(`${apiUrl}/webhook-endpoints`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${owner}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: hooks.url, format: 'event', events: ['plant.created'] }),
    });
    expect(endpoint.status).toBe(201);
    hooks.setSecret(((await endpoint.json()) as { secret: string }).secret);
    // An endpoint hears of events from 5 s after it is made (docs/webhooks.md).
    await new Promise((resolve) => setTimeout(resolve, 5_500));

    // Without a traceparent: API Gateway's X-Ray trace, which the authorizer's span shares.
    const read = await fetch(`${apiUrl}/plants/404`, {
      headers: { Authorization: `Bearer ${plants}` },
    });
    expect(read.status).toBe(404);
    const readTrace = /^00-([0-9a-f]{32})-/.exec(
      read.headers.get('traceresponse') ?? '',
    )?.[1] as string;
    const readSpans = await waitForSpan(readTrace, (span) => span.operationName === 'get-plant');
    expect(
      readSpans.map((span) => `${span.service} ${span.operationName} ${span.kind}`).sort(),
    ).toEqual([
      'authorizer authorizer server',
      'get-plant DynamoDB.GetItem client',
      'get-plant get-plant server',
    ]);

    // With the client's: the function below it, and everything its plant makes.
    const clientTrace = randomBytes(16).toString('hex');
    const clientSpan = randomBytes(8).toString('hex');
    const create = await fetch(`${apiUrl}/plants`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${plants}`,
        'Content-Type': 'application/json',
        traceparent: `00-${clientTrace}-${clientSpan}-01`,
      },
      body: JSON.stringify({ id: 31, name: 'Followed' }),
    });
    expect(create.status).toBe(200);
    await hooks.waitForAccepted(1);
    const received = String(hooks.deliveries[0]?.headers.traceparent);
    expect(received).toMatch(new RegExp(`^00-${clientTrace}-[0-9a-f]{16}-01$`));
    const attemptId = received.split('-')[2] as string;
    const spans = await waitForSpan(clientTrace, (span) => span.spanID === attemptId);
    const named = (name: string) => spans.find((span) => span.operationName === name);
    const parentOf = (span: ViewerSpan | undefined) =>
      span?.references.find((reference) => reference.refType === 'CHILD_OF')?.spanID;
    const request = named('create-plant');
    expect(request).toMatchObject({ service: 'create-plant', kind: 'server' });
    expect(parentOf(request)).toBe(clientSpan);
    expect(
      spans.filter((span) => parentOf(span) === request?.spanID).map((span) => span.operationName),
    ).toContain('DynamoDB.PutItem');
    const delivery = named('deliver-webhook');
    expect(delivery).toMatchObject({ service: 'deliver-webhook', kind: 'consumer' });
    expect(parentOf(delivery)).toBe(request?.spanID);
    const attempt = spans.find((span) => span.spanID === attemptId);
    expect(attempt).toMatchObject({ operationName: 'POST', kind: 'client' });
    expect(parentOf(attempt)).toBe(delivery?.spanID);
    expect(attempt?.tags).toContainEqual(
      expect.objectContaining({ key: 'http.response.status_code', value: 204 }),
    );

    // The fan-out is a trace of its own (a stream batch carries many), linked to the request.
    const { data: fanouts } = (await (
      await fetch(`${viewerUrl}/api/traces?service=webhook-fanout&limit=50&lookback=1h`)
    ).json()) as { data: { spans: ViewerSpan[] }[] };
    const fanout = fanouts
      .flatMap((trace) => trace.spans)
      .find((span) => span.references.some((reference) => reference.spanID === request?.spanID));
    expect(fanout?.references).toContainEqual({
      refType: 'FOLLOWS_FROM',
      traceID: clientTrace,
      spanID: request?.spanID,
    });

    // The page draws the trace, each span below its parent, and follows a link to another trace.
    // As root (CI), Chromium's sandbox cannot start; the page is our own.
    browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
    const page = await browser.newPage();
    await page.goto(`${viewerUrl}/trace/${clientTrace}`);
    await page.locator(`tr[data-span-id="${attemptId}"]`).waitFor();
    const drawn = await rowsOf(page);
    const at = (spanId: string | undefined) => drawn.findIndex((row) => row.spanId === spanId);
    expect(drawn[at(request?.spanID)]).toMatchObject({ service: 'create-plant', depth: 0 });
    expect(drawn[at(delivery?.spanID)]).toMatchObject({ service: 'deliver-webhook', depth: 1 });
    expect(drawn[at(attemptId)]).toMatchObject({ service: 'deliver-webhook', depth: 2 });
    expect(drawn[at(attemptId)]?.operation).toContain('http.response.status_code=204');
    expect(at(request?.spanID)).toBeLessThan(at(delivery?.spanID));
    expect(at(delivery?.spanID)).toBeLessThan(at(attemptId));
    expect(await page.locator('#status').textContent()).toMatch(
      new RegExp(`^Trace ${clientTrace}: \\d+ spans\\.$`),
    );
    // The delivery came in the fan-out's message: its link opens the fan-out's trace, which
    // links back to the request.
    await page.locator(`tr[data-span-id="${delivery?.spanID}"] td.links a`).click();
    await page.locator('tr td.service', { hasText: 'webhook-fanout' }).first().waitFor();
    const fanoutRows = await rowsOf(page);
    expect(fanoutRows.map((row) => row.service)).toContain('webhook-fanout');
    expect(fanoutRows.some((row) => row.links.includes(`trace ${clientTrace}`))).toBe(true);
    expect(page.url()).toMatch(/\/trace\/[0-9a-f]{32}$/);
    expect(page.url()).not.toContain(clientTrace);
  }, 120_000);
});

/** The page's rows: each span's id, depth, service, operation (with its attributes) and links. */
async function rowsOf(page: Page) {
  const rows = page.locator('#spans tbody tr');
  const drawn = [];
  for (let index = 0; index < (await rows.count()); index += 1) {
    const row = rows.nth(index);
    drawn.push({
      spanId: await row.getAttribute('data-span-id'),
      depth: Number(await row.getAttribute('data-depth')),
      service: (await row.locator('td.service').textContent()) ?? '',
      operation: (await row.locator('td.operation').textContent()) ?? '',
      links: (await row.locator('td.links').textContent()) ?? '',
    });
  }
  return drawn;
}
