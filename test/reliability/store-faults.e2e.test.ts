/**
 * The store hangs, dies and comes back while clients keep creating plants: every answer is 200
 * or 503/50300, the API process survives, service resumes without restarting it, and every
 * create acknowledged with 200 is stored afterwards. How long the 503s took is reported, not
 * asserted: a busy machine stretches it (`npm run bench` reports the store deadline's figures).
 *
 * The store is a DynamoDB Local of this file's own, with its data in a temporary folder so that
 * what it acknowledged survives its death; the API runs in its own process, as in production
 * the function runs apart from the table.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { errorBody, errorCodes } from '../../functions/shared/errors/error-codes.ts';
import {
  createDocumentClient,
  storeDeadlineMilliseconds,
} from '../../functions/shared/platform/dynamodb.ts';
import { type DynamoDbLocal, startDynamoDbLocal } from '../../local/dynamodb-local.ts';
import { type ApiProcess, startApiProcess, unthrottled } from './api-process.ts';
import { findLogLeaks } from './log-audit.ts';
import { percentile, postPlant, runConcurrently, type TimedAnswer } from './plant-client.ts';
import { auditStore, cleanAudit, type ExpectedPlant, scanStoredItems } from './stored-plants.ts';

const clients = 8;
/** No phase waits forever: each is bounded in time, each client loop in count. */
const maxCreatesPerClient = 2_000;
const clientBackoffMilliseconds = 250;
/** Long enough for every client to see at least one create start and end inside the hang. */
const hangMilliseconds = 2 * storeDeadlineMilliseconds + 2_000;

let dataDirectory: string;
const stores: DynamoDbLocal[] = [];
let api: ApiProcess;
let token: string;
let documentClient: DynamoDBDocumentClient;
const runMarker = randomUUID();

/** One create of the traffic, and what it was answered. */
interface Create {
  readonly id: bigint;
  readonly plant: ExpectedPlant;
  readonly body: string;
  readonly answer: TimedAnswer;
}

/**
 * Clients creating distinct plants back to back until stopped. Ids are taken from a counter, so
 * every create is a new plant; a 503'd one is retried at the end.
 */
function startTraffic() {
  const creates: Create[] = [];
  let running = true;
  let nextId = BigInt(Date.now()) * 1_000_000n;
  const client = async () => {
    for (let count = 0; running && count < maxCreatesPerClient; count += 1) {
      nextId += 1n;
      const id = nextId;
      const plant = { name: `Fault ${id} ${runMarker}`, tag: 'fault' };
      const body = `{"id":${id},"name":${JSON.stringify(plant.name)},"tag":"fault"}`;
      // A client timeout far beyond the bound: the answer's time is what is asserted.
      const answer = await postPlant(api.url, body, { token, timeoutMilliseconds: 30_000 });
      creates.push({ id, plant, body, answer });
      // Like a polite client, back off a little after a 503 (it retries that id at the end).
      if (answer.status !== 200) await delay(clientBackoffMilliseconds);
    }
  };
  const done = Promise.all(Array.from({ length: clients }, client));
  return {
    creates,
    stop: async () => {
      running = false;
      await done;
      return creates;
    },
  };
}

/** Waits until `clients` creates started after `from` have been answered (bounded). */
async function untilAnswered(
  creates: readonly Create[],
  from: number,
  milliseconds: number,
): Promise<void> {
  const deadline = performance.now() + milliseconds;
  while (performance.now() < deadline) {
    if (creates.filter(({ answer }) => answer.startedAt >= from).length >= clients) return;
    await delay(100);
  }
}

/**
 * Until every client has been answered for a create it started after the first 200 since `from`
 * ended: a JVM restarted on a busy machine may answer 503 for seconds before its first 200.
 */
async function untilAnsweredAfterFirstOk(
  creates: readonly Create[],
  from: number,
  milliseconds: number,
): Promise<void> {
  const deadline = performance.now() + milliseconds;
  while (performance.now() < deadline) {
    const firstOk = creates
      .filter(({ answer }) => answer.startedAt >= from && answer.status === 200)
      .sort((one, other) => one.answer.startedAt - other.answer.startedAt)[0];
    if (firstOk !== undefined) {
      const { startedAt, milliseconds: took } = firstOk.answer;
      return untilAnswered(creates, startedAt + took, deadline - performance.now());
    }
    await delay(100);
  }
}

function delay(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

/** Resolves once nothing listens on `port` any more (bounded). */
async function waitUntilClosed(port: number): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (!open) return;
    await delay(100);
  }
  throw new Error(`Port ${port} is still open`);
}

const storeUnavailable = errorBody(errorCodes.storeUnavailable);

/** Every answer is a 200 or exactly the 503 body. */
function expectOnly200Or503(creates: readonly Create[]) {
  for (const { answer } of creates) {
    if (answer.status !== 200) {
      expect({ status: answer.status, body: answer.body }).toEqual({
        status: 503,
        body: storeUnavailable,
      });
    }
  }
}

/**
 * After `from`, 200s again: once the first create started after `from` is answered 200, every
 * create started after that one is 200 (a JVM resumed on a busy machine may answer 503 first:
 * the service counts from its first 200, not from the signal).
 */
function expectResumed(creates: readonly Create[], from: number) {
  const after = creates
    .filter(({ answer }) => answer.startedAt >= from)
    .sort((one, other) => one.answer.startedAt - other.answer.startedAt);
  const firstOk = after.find(({ answer }) => answer.status === 200);
  expect(firstOk).toBeDefined();
  const later = after.filter(
    ({ answer }) =>
      answer.startedAt >=
      (firstOk === undefined
        ? Number.POSITIVE_INFINITY
        : firstOk.answer.startedAt + firstOk.answer.milliseconds),
  );
  expect(later.length).toBeGreaterThanOrEqual(clients);
  const notOk = later.filter(({ answer }) => answer.status !== 200);
  expect(notOk.map(({ answer }) => describeAnswer(answer))).toEqual([]);
}

/** The creates that started and ended inside [from, to] (performance.now() times). */
function within(creates: readonly Create[], from: number, to: number) {
  return creates.filter(
    ({ answer }) => answer.startedAt >= from && answer.startedAt + answer.milliseconds <= to,
  );
}

/** An answer in a line, for a failure message. */
function describeAnswer(answer: Create['answer']): string {
  return `${answer.status} ${answer.text} after ${answer.milliseconds.toFixed(0)} ms`;
}

function describeTimes(label: string, creates: readonly Create[]): string {
  const times = creates.map(({ answer }) => answer.milliseconds);
  return `${label}: ${creates.length} answers 503, max ${Math.max(...times).toFixed(0)} ms, p99 ${percentile(times, 0.99).toFixed(0)} ms`;
}

const allCreates: Create[] = [];

beforeAll(async () => {
  dataDirectory = await mkdtemp(join(tmpdir(), 'plant-store-reliability-store-'));
  const store = await startDynamoDbLocal({ dataDirectory });
  stores.push(store);
  api = await startApiProcess({
    storeUrl: store.url,
    tableName: 'plants',
    throttling: unthrottled,
  });
  token = api.signToken();
  documentClient = createDocumentClient({ url: store.url });
});

afterAll(async () => {
  await api?.stop();
  documentClient?.destroy();
  // stop() resumes a paused JVM before ending it, and is harmless for one already dead.
  for (const store of stores) await store.stop();
  if (dataDirectory !== undefined) await rm(dataDirectory, { recursive: true, force: true });
});

describe('while the store misbehaves under steady traffic', () => {
  it('answers 503/50300 while the store hangs, and 200 again once it continues', async () => {
    const store = stores[0] as DynamoDbLocal;
    const traffic = startTraffic();
    await delay(1_000);
    const pausedAt = performance.now();
    process.kill(store.pid, 'SIGSTOP');
    let continuedAt: number;
    try {
      await delay(hangMilliseconds);
    } finally {
      continuedAt = performance.now();
      process.kill(store.pid, 'SIGCONT');
    }
    // Traffic goes on until every client has been answered for a create it started a second
    // after the store continued (a JVM resumed on a busy machine takes a moment to catch up).
    await untilAnswered(traffic.creates, continuedAt + 1_000, 30_000);
    await untilAnsweredAfterFirstOk(traffic.creates, continuedAt, 60_000);
    const creates = await traffic.stop();
    allCreates.push(...creates);

    expectOnly200Or503(creates);
    const duringHang = within(creates, pausedAt, continuedAt);
    expect(duringHang.length).toBeGreaterThanOrEqual(clients);
    const notRefused = duringHang.filter(({ answer }) => answer.status !== 503);
    expect(notRefused.map(({ answer }) => describeAnswer(answer))).toEqual([]);
    // Service resumes in the same API process: after SIGCONT, 200s come again (a 503 may come
    // first while a JVM resumed on a busy machine catches up).
    expectResumed(creates, continuedAt);
    expect(api.isRunning()).toBe(true);
    console.info(
      describeTimes(
        'store hung',
        creates.filter(({ answer }) => answer.status === 503),
      ),
    );
  }, 180_000);

  it('answers 503/50300 while the store is dead, and 200 again once it is back on its port', async () => {
    const dead = stores[0] as DynamoDbLocal;
    const traffic = startTraffic();
    await delay(1_000);
    const killedAt = performance.now();
    process.kill(dead.pid, 'SIGKILL');
    await waitUntilClosed(dead.port);
    await delay(3_000);
    const restartedAt = performance.now();
    stores.push(await startDynamoDbLocal({ dataDirectory, port: dead.port }));
    const backAt = performance.now();
    // Until every client has been answered for a create it started a second after the store was
    // back (each may take its three attempts, 3 s, on a busy machine), and after its first 200.
    await untilAnswered(traffic.creates, backAt + 1_000, 30_000);
    await untilAnsweredAfterFirstOk(traffic.creates, backAt, 60_000);
    const creates = await traffic.stop();
    allCreates.push(...creates);

    expectOnly200Or503(creates);
    const whileDead = within(creates, killedAt + 500, restartedAt);
    expect(whileDead.length).toBeGreaterThanOrEqual(clients);
    expect(whileDead.every(({ answer }) => answer.status === 503)).toBe(true);
    expectResumed(creates, backAt);
    expect(api.isRunning()).toBe(true);
    console.info(
      describeTimes(
        'store dead',
        creates.filter(({ answer }) => answer.status === 503),
      ),
    );
  }, 180_000);

  it('loses no acknowledged create: every 200 is stored intact, and every 503 retried succeeds', async () => {
    const acknowledged = new Map<string, ExpectedPlant>();
    for (const { id, plant, answer } of allCreates) {
      if (answer.status === 200) acknowledged.set(String(id), plant);
    }
    // What the client of a 503 does: retry the same create after Retry-After, which is safe
    // because it is idempotent, until it is answered otherwise.
    const unavailable = allCreates.filter(({ answer }) => answer.status === 503);
    expect(unavailable.length).toBeGreaterThan(0);
    const retries = await runConcurrently(unavailable, clients, async ({ body }) => {
      for (let attempt = 1; ; attempt += 1) {
        const retry = await postPlant(api.url, body, { token });
        if (retry.status !== 503 || attempt === 20) return retry;
        await delay(1_000);
      }
    });
    retries.forEach((retry, index) => {
      const { id, plant } = unavailable[index] as Create;
      expect({ status: retry.status, body: retry.body }).toEqual({ status: 200, body: plant });
      acknowledged.set(String(id), plant);
    });

    const stored = await scanStoredItems(documentClient, 'plants');
    expect(auditStore(stored, acknowledged)).toEqual(cleanAudit);
    console.info(
      `faults: ${allCreates.length} creates, ${allCreates.length - unavailable.length} answered 200, ` +
        `${unavailable.length} answered 503 and retried with 200; ${stored.length} stored, none missing`,
    );
  }, 180_000);

  it('logs no token, Authorization header or request body', () => {
    expect(findLogLeaks(api.outputLines, [token, runMarker])).toEqual([]);
  });
});
