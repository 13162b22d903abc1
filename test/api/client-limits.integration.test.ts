/**
 * Limits per client, as the deployed stage keeps them and the local stand-in imitates them: one
 * client looping on a route, on one token (the web ACL, `infra/token-limits.ts`) or on a fresh
 * token for each request (the usage plan, one API key per client), does not answer another
 * client's spaced requests 429 by draining the method's bucket, which every client shares.
 *
 * @services dynamodb-local
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { gatewayErrorCodes } from '../../functions/shared/errors/error-codes.ts';
import { createLogger } from '../../functions/shared/platform/logger.ts';
import { type LocalApi, startLocalApi } from '../../local/local-api.ts';
import { testStoreUrl } from '../support/test-store.ts';

const tokenThrottledMessage = gatewayErrorCodes.tokenThrottled.message;
let api: LocalApi;
let keysDirectory: string;

beforeAll(async () => {
  keysDirectory = await mkdtemp(join(tmpdir(), 'plant-store-client-limits-'));
  api = await startLocalApi({
    port: 0,
    dynamoDbUrl: testStoreUrl(),
    tableName: `plants-client-limits-${process.pid}-${Date.now()}`,
    keysDirectory,
    // The dev stage's limits: each endpoint route 2/s, bursts of 4, shared by every client.
    throttlingStage: 'dev',
    logger: createLogger({}, () => {}),
    webhooks: {
      endpointUrlPolicy: { httpsOnly: false, allowLoopback: true, resolve: async () => [] },
    },
  });
}, 180_000);

afterAll(async () => {
  await api?.stop();
  await rm(keysDirectory, { recursive: true, force: true });
});

/**
 * A client: one token, kept for every request, as an OAuth client keeps its access token; or,
 * with `rotating`, a token of its own for each request.
 */
function clientOf(subject: string, { rotating = false } = {}) {
  let tokens = 0;
  const tokenOf = () => {
    tokens += 1;
    // Tokens signed in the same second differ by their expiry.
    return api.signToken({
      scope: 'webhooks/manage plants/read',
      subject,
      ...(rotating ? { expiresInSeconds: 3_600 + tokens } : {}),
    });
  };
  const kept = tokenOf();
  return async (method: string, path: string, body?: unknown) => {
    const token = rotating ? tokenOf() : kept;
    const response = await fetch(`${api.url}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
}

it("leaves another client's spaced requests answered while one client loops on the same route", async () => {
  const looping = clientOf('client-a');
  const spaced = clientOf('client-b');
  const { body: endpointA } = await looping('POST', '/webhook-endpoints', {
    url: 'http://127.0.0.1:9/a',
  });
  const { body: endpointB } = await spaced('POST', '/webhook-endpoints', {
    url: 'http://127.0.0.1:9/b',
  });

  let looping_ = true;
  const loopAnswers: { status: number; body: Record<string, unknown> }[] = [];
  const loop = async () => {
    while (looping_)
      loopAnswers.push(await looping('POST', `/webhook-endpoints/${endpointA.id}/test`));
  };
  const loops = Promise.all([loop(), loop(), loop()]);
  // Client B starts once the loop has met its own limit (at most 10 s: without per-client limits
  // it never does, and B then meets the method bucket the loop drains), then tests its own
  // endpoint every 1.5 s (within its 10 tests a minute).
  const refusedForItself = () =>
    loopAnswers.some((answer) => answer.body.message === tokenThrottledMessage);
  const deadline = Date.now() + 10_000;
  while (!refusedForItself() && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  // What the loop drained of the route's bucket (2 a second) comes back within a second.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const spacedAnswers: number[] = [];
  for (let request = 0; request < 8; request += 1) {
    spacedAnswers.push((await spaced('POST', `/webhook-endpoints/${endpointB.id}/test`)).status);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
  }
  looping_ = false;
  await loops;

  const refusedForClient = loopAnswers.filter(
    (answer) => answer.status === 429 && answer.body.message === tokenThrottledMessage,
  );
  console.info(
    `client limits: the looping client sent ${loopAnswers.length} requests, ` +
      `${refusedForClient.length} refused for it alone; the spaced client's ${spacedAnswers.length} answers: ${spacedAnswers.join(' ')}`,
  );
  expect(spacedAnswers).toEqual(Array(8).fill(202));
  // The loop is refused per client; at most a minute's limit of its requests got through.
  expect(loopAnswers.length - refusedForClient.length).toBeLessThanOrEqual(60);
  expect(refusedForClient.length).toBeGreaterThan(0);
}, 180_000);

it("leaves another client's spaced requests answered while one client loops with a fresh token for each request", async () => {
  const flooding = clientOf('client-c', { rotating: true });
  const spaced = clientOf('client-d');
  const { body: endpointC } = await flooding('POST', '/webhook-endpoints', {
    url: 'http://127.0.0.1:9/c',
  });
  const { body: endpointD } = await spaced('POST', '/webhook-endpoints', {
    url: 'http://127.0.0.1:9/d',
  });
  // Both may have met their POST limit above: the buckets refill within two seconds.
  await new Promise((resolve) => setTimeout(resolve, 2_000));

  let flooding_ = true;
  const floodAnswers: number[] = [];
  const loop = async () => {
    while (flooding_)
      floodAnswers.push((await flooding('GET', `/webhook-endpoints/${endpointC.id}`)).status);
  };
  // Four loops, as the finding ran them; the spaced client reads its own endpoint every 1.5 s.
  const loops = Promise.all([loop(), loop(), loop(), loop()]);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const spacedAnswers: number[] = [];
  for (let request = 0; request < 10; request += 1) {
    spacedAnswers.push((await spaced('GET', `/webhook-endpoints/${endpointD.id}`)).status);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
  }
  flooding_ = false;
  await loops;

  const throttled = floodAnswers.filter((status) => status === 429).length;
  console.info(
    `client limits, rotating tokens: the flooding client sent ${floodAnswers.length} requests ` +
      `(${floodAnswers.length - throttled} answered 200, ${throttled} refused 429); ` +
      `the spaced client's ${spacedAnswers.length} answers: ${spacedAnswers.join(' ')}`,
  );
  expect(spacedAnswers).toEqual(Array(10).fill(200));
  expect(throttled).toBeGreaterThan(0);
  // The flooding client's share of the route: 1 a second and a burst of 2 over about 16 s.
  expect(floodAnswers.length - throttled).toBeLessThanOrEqual(25);
}, 180_000);
