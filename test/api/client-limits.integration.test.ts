/**
 * Limits per client, as the deployed stage's web ACL keeps them and the local stand-in imitates
 * them (`infra/client-limits.ts`): one client looping on a route no longer answers another's
 * spaced requests 429 by draining the method's bucket, which every client shares.
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

const clientThrottledMessage = gatewayErrorCodes.clientThrottled.message;
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

/** A client: one token, kept for every request, as an OAuth client keeps its access token. */
function clientOf(subject: string) {
  const token = api.signToken({ scope: 'webhooks/manage plants/read', subject });
  return async (method: string, path: string, body?: unknown) => {
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
    loopAnswers.some((answer) => answer.body.message === clientThrottledMessage);
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
    (answer) => answer.status === 429 && answer.body.message === clientThrottledMessage,
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
