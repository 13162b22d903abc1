/**
 * Self-service webhook endpoints as a subscriber uses them through `npm start`: tokens from
 * `npm run -s token -- --scope webhooks/manage --subject <client>`, real HTTP, receivers on
 * 127.0.0.1 verifying every delivery with the Standard Webhooks library. Register and receive,
 * another client's view, a test event, a rotation, disable and recover, delete, a hostile URL.
 * Waits honour the stated bound: an endpoint hears of events from 5 seconds after a change.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { type OtlpRecorder, startOtlpRecorder } from '../../beds/otlp-recorder.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../beds/webhook-receiver.ts';
import { PlantStoreWebhooks } from '../../clients/typescript/src/webhooks.ts';
import { npmToken, startNpmStart } from '../support/npm-start.ts';

const repositoryRoot = new URL('../..', import.meta.url).pathname;
/** The bound docs/webhooks.md states, with a little room. */
const takesEffect = () => new Promise((resolve) => setTimeout(resolve, 5_500));

let dataDirectory: string;
let npmStart: ChildProcess | undefined;
let exited: Promise<unknown>;
let apiUrl: string;
let banner: string;
const receivers: WebhookReceiver[] = [];
/** Where `npm start` exports its spans, as it would to a collector. */
let collector: OtlpRecorder;

/** `npm run -s token -- …`, as a developer runs it. */
const token = (...args: string[]) => npmToken(repositoryRoot, dataDirectory, ...args);

async function call(
  bearer: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const response = await fetch(`${apiUrl}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${bearer}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

async function receiver(): Promise<WebhookReceiver> {
  const started = await startWebhookReceiver(`whsec_${randomBytes(32).toString('base64')}`);
  receivers.push(started);
  return started;
}

beforeAll(async () => {
  dataDirectory = await mkdtemp(join(tmpdir(), 'plant-store-endpoints-e2e-'));
  collector = await startOtlpRecorder();
  // A wait, not a bound: a busy machine may take long to start Node.js and a JVM.
  const started = await startNpmStart({
    repositoryRoot,
    cwd: dataDirectory,
    environment: {
      ...process.env,
      PORT: '0',
      PLANT_STORE_DATA_DIR: join(dataDirectory, 'data'),
      THROTTLING: 'off',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
    },
    waitMilliseconds: 150_000,
  });
  ({ child: npmStart, exited, apiUrl } = started);
  banner = started.output();
}, 180_000);

afterAll(async () => {
  for (const started of receivers) await started.stop();
  // SIGTERM to npm alone, as docker stop and IDEs do: it stops everything it started.
  if (npmStart?.exitCode === null) {
    npmStart.kill('SIGTERM');
    await exited;
  }
  await collector?.stop();
  await rm(dataDirectory, { recursive: true, force: true });
});

describe('webhook endpoints through npm start', () => {
  it('registers, receives signed events, tests, rotates, recovers and deletes, each client alone', async () => {
    const [clientA, clientB, plants] = await Promise.all([
      token('--scope', 'webhooks/manage plants/read', '--subject', 'client-a'),
      token('--scope', 'webhooks/manage plants/read', '--subject', 'client-b'),
      token(),
    ]);
    const hostile = await call(clientA, 'POST', '/webhook-endpoints', {
      url: 'http://[::ffff:169.254.169.254]/',
    });
    expect(hostile).toMatchObject({ status: 400, body: { error: 40024 } });
    // The start says how to get a token for endpoints, and that loopback receivers are allowed.
    expect(banner).toContain("--scope 'webhooks/manage plants/read' --subject <client>");
    expect(banner).toContain("http and this machine's loopback allowed");

    const hooks = await receiver();
    const created = await call(clientA, 'POST', '/webhook-endpoints', { url: hooks.url });
    expect(created.status).toBe(201);
    const { id, secret } = created.body as { id: string; secret: string };
    hooks.setSecret(secret);
    expect((await call(clientB, 'GET', `/webhook-endpoints/${id}`)).status).toBe(404);
    expect((await call(clientB, 'GET', '/webhook-endpoints')).body).toEqual([]);
    expect((await call(plants, 'GET', '/webhook-endpoints')).status).toBe(403);

    await takesEffect();
    expect((await call(plants, 'POST', '/plants', { id: 1, name: 'Fern' })).status).toBe(200);
    await hooks.waitForAccepted(1);
    expect(hooks.deliveries[0]).toMatchObject({ verified: true });
    expect(JSON.parse(hooks.deliveries[0]?.body ?? '')).toMatchObject({
      type: 'plant.created',
      data: { id: 1 },
    });

    const tested = await call(clientA, 'POST', `/webhook-endpoints/${id}/test`);
    await hooks.waitForAccepted(2);
    expect(hooks.accepted().get(tested.body.eventId)).toMatchObject({ verified: true });

    const rotated = (await call(clientA, 'POST', `/webhook-endpoints/${id}/secret/rotate`)).body
      .secret as string;
    expect((await call(plants, 'POST', '/plants', { id: 2, name: 'Moss' })).status).toBe(200);
    await hooks.waitForAccepted(3);
    const afterRotation = hooks.deliveries.find((delivery) => delivery.body.includes('"id":2'));
    for (const key of [secret, rotated]) {
      expect(() =>
        new Webhook(key).verify(
          afterRotation?.body ?? '',
          afterRotation?.headers as Record<string, string>,
        ),
      ).not.toThrow();
    }

    const since = new Date(Date.now() - 1000).toISOString();
    const patch = (enabled: boolean) =>
      call(
        clientA,
        'PATCH',
        `/webhook-endpoints/${id}`,
        { enabled },
        { 'Content-Type': 'application/merge-patch+json', 'If-Match': '*' },
      );
    expect((await patch(false)).body).toMatchObject({ enabled: false });
    for (const plant of [3, 4]) {
      expect((await call(plants, 'POST', '/plants', { id: plant, name: 'Ivy' })).status).toBe(200);
    }
    // Their deliveries found the endpoint disabled as they were to be sent: nothing was.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(hooks.deliveries).toHaveLength(3);
    expect((await patch(true)).body).toMatchObject({ enabled: true });
    // Enabled again: what it missed stays missed until recover asks.
    await takesEffect();
    expect(hooks.deliveries).toHaveLength(3);
    expect(
      (await call(clientA, 'POST', `/webhook-endpoints/${id}/recover`, { since })).body,
    ).toEqual({ events: 2, more: false });
    await hooks.waitForAccepted(5);
    expect(
      (await call(clientA, 'POST', `/webhook-endpoints/${id}/recover`, { since })).body,
    ).toEqual({ events: 0, more: false });

    const attempts = (await call(clientA, 'GET', `/webhook-endpoints/${id}/attempts`)).body as {
      outcome: string;
    }[];
    expect(attempts.length).toBeGreaterThanOrEqual(5);
    expect(attempts.every((attempt) => attempt.outcome === 'delivered')).toBe(true);

    expect((await call(clientA, 'DELETE', `/webhook-endpoints/${id}`)).status).toBe(204);
    expect((await call(plants, 'POST', '/plants', { id: 5, name: 'Oak' })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(hooks.deliveries).toHaveLength(5);
    expect(hooks.deliveries.every((delivery) => delivery.verified)).toBe(true);
  }, 180_000);

  it('carries each change’s W3C trace to the receiver, the answer and the attempt log', async () => {
    const [owner, plants] = await Promise.all([
      token('--scope', 'webhooks/manage plants/read', '--subject', 'client-traced'),
      token(),
    ]);
    const hooks = await receiver();
    const created = await call(owner, 'POST', '/webhook-endpoints', {
      url: hooks.url,
      format: 'event',
      events: ['plant.created', 'plant.updated'],
    });
    expect(created.status).toBe(201);
    hooks.setSecret(created.body.secret);
    const verifier = new PlantStoreWebhooks(created.body.secret);
    await takesEffect();

    // One change in the client's trace, one begun by the store: each answer names its own.
    const clientTrace = randomBytes(16).toString('hex');
    const clientSpanId = randomBytes(8).toString('hex');
    const traceresponse = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;
    const create = await fetch(`${apiUrl}/plants`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${plants}`,
        'Content-Type': 'application/json',
        traceparent: `00-${clientTrace}-${clientSpanId}-01`,
      },
      body: JSON.stringify({ id: 77, name: 'Traced' }),
    });
    expect(create.status).toBe(200);
    const createSpan = traceresponse.exec(create.headers.get('traceresponse') ?? '');
    expect(createSpan?.[1]).toBe(clientTrace);
    const update = await fetch(`${apiUrl}/plants/77`, {
      method: 'PATCH',
      headers: {
        Authorization: `Bearer ${plants}`,
        'Content-Type': 'application/merge-patch+json',
        'If-Match': create.headers.get('etag') ?? '',
      },
      body: JSON.stringify({ tag: 'fern' }),
    });
    expect(update.status).toBe(200);
    const updateTrace = traceresponse.exec(update.headers.get('traceresponse') ?? '')?.[1];
    expect(updateTrace).toMatch(/^[0-9a-f]{32}$/);
    expect(updateTrace).not.toBe(clientTrace);

    await hooks.waitForAccepted(2);
    const received = hooks.deliveries.map((delivery) => {
      const webhook = verifier.verify(delivery.body, delivery.headers);
      if (webhook.format !== 'event') throw new Error(`Not an event: ${delivery.body}`);
      return { type: webhook.event.type, traceparent: webhook.traceparent };
    });
    const traceOf = (type: string) => received.find((webhook) => webhook.type === type);
    // Each attempt is a span of its own below the request's: the same trace, another span.
    expect(traceOf('plant.created')?.traceparent).toMatch(
      new RegExp(`^00-${clientTrace}-(?!${createSpan?.[2]})[0-9a-f]{16}-01$`),
    );
    expect(traceOf('plant.updated')?.traceparent).toMatch(
      new RegExp(`^00-${updateTrace}-[0-9a-f]{16}-01$`),
    );
    const attempts = (await call(owner, 'GET', `/webhook-endpoints/${created.body.id}/attempts`))
      .body as { traceId?: string }[];
    expect(attempts.map((attempt) => attempt.traceId).sort()).toEqual(
      [clientTrace, updateTrace].sort(),
    );

    // The spans `npm start` exported: the create's, below the client's span, with its store
    // calls; the fan-out linked to it; the delivery and its attempt in the client's trace, the
    // attempt's span the one the receiver was given.
    const created77 = hooks.deliveries.find((delivery) => delivery.body.includes('plant.created'));
    const receivedSpan = String(created77?.headers.traceparent).split('-')[2];
    const spans = collector.spans;
    for (let waited = 0; !spans.some((span) => span.spanId === receivedSpan); waited += 100) {
      if (waited > 10_000) throw new Error(`No attempt span ${receivedSpan}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const inTrace = spans.filter((span) => span.traceId === clientTrace);
    const createPlant = inTrace.find((span) => span.name === 'create-plant');
    expect(createPlant).toMatchObject({
      name: 'create-plant',
      kind: 2,
      attributes: { 'http.response.status_code': 200 },
    });
    expect(createPlant?.status).toBeUndefined();
    expect(createPlant?.parentSpanId).toBe(clientSpanId);
    expect(createPlant?.spanId).toBe(createSpan?.[2]);
    expect(inTrace.filter((span) => span.parentSpanId === createPlant?.spanId)).toContainEqual(
      expect.objectContaining({ name: expect.stringMatching(/^DynamoDB\./), kind: 3 }),
    );
    const fanout = spans.find(
      (span) =>
        span.service === 'webhook-fanout' &&
        span.links.some((link) => link.spanId === createPlant?.spanId),
    );
    // One batch may carry the update's event too: a link each.
    expect(fanout?.kind).toBe(5);
    expect(fanout?.links).toContainEqual({ traceId: clientTrace, spanId: createPlant?.spanId });
    expect(spans).toContainEqual(
      expect.objectContaining({ name: 'deliveries send', kind: 4, parentSpanId: fanout?.spanId }),
    );
    const attempt = inTrace.find((span) => span.spanId === receivedSpan);
    expect(attempt).toMatchObject({ name: 'POST', kind: 3, service: 'deliver-webhook' });
    expect(inTrace.find((span) => span.spanId === attempt?.parentSpanId)).toMatchObject({
      name: 'deliver-webhook',
      kind: 5,
      parentSpanId: createPlant?.spanId,
    });
    expect(spans.some((span) => span.service === 'authorizer' && span.kind === 2)).toBe(true);
  }, 120_000);
});
