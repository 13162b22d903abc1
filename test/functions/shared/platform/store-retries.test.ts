/**
 * Every store call makes its three attempts, however long the store has been failing: an outage
 * longer than the SDK's retry quota lasts (a bucket of 500 per client, 14 a retry) must not
 * leave the calls after it with one attempt each (docs/api.md: "3 attempts within 3 s").
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { StoreUnavailableError } from '../../../../functions/shared/errors/errors.ts';
import { callStore, createDocumentClient } from '../../../../functions/shared/platform/dynamodb.ts';

/** How the stand-in store answers: not at all (stalled), or a 500 to each call's first attempt. */
let mode: 'stalled' | 'failing-first-attempts' = 'stalled';
/** The calls (the SDK's invocation ids, the same on every attempt of a call) answered so far. */
const failedCalls = new Set<string>();
let requests = 0;
const held: ServerResponse[] = [];
let server: Server;

beforeAll(async () => {
  server = createServer((request, response) => {
    request.resume().on('end', () => {
      requests += 1;
      if (mode === 'stalled') {
        held.push(response);
        return;
      }
      const call = String(request.headers['amz-sdk-invocation-id']);
      const failed = !failedCalls.has(call);
      failedCalls.add(call);
      response.writeHead(failed ? 500 : 200, { 'Content-Type': 'application/x-amz-json-1.0' });
      response.end(
        failed ? '{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError"}' : '{}',
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  for (const response of held) response.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

it('makes three attempts a call through a stall longer than the SDK’s retry quota, and retries right after it', async () => {
  const { port } = server.address() as AddressInfo;
  const client = createDocumentClient({ url: `http://127.0.0.1:${port}` });
  // A deadline long enough for three attempts on a machine too busy to keep time (beside
  // stress-ng, 6 s cut some calls' third attempt): the attempts are the point, not the deadline.
  const get = () =>
    callStore(
      (abortSignal) =>
        client.send(new GetCommand({ TableName: 'plants', Key: { id: 1n } }), { abortSignal }),
      20_000,
    );
  try {
    // 60 calls at once into a store that never answers: 120 retries, where the quota has 35.
    const stalled = await Promise.allSettled(Array.from({ length: 60 }, get));
    expect(stalled.every((call) => call.status === 'rejected')).toBe(true);
    expect(
      stalled.every(
        (call) => call.status === 'rejected' && call.reason instanceof StoreUnavailableError,
      ),
    ).toBe(true);
    expect(requests).toBe(180);

    // Back, but each call's first attempt fails: its second answers.
    for (const response of held.splice(0)) response.destroy();
    mode = 'failing-first-attempts';
    requests = 0;
    const after = await Promise.allSettled(Array.from({ length: 10 }, get));
    expect(after.map((call) => call.status)).toEqual(Array(10).fill('fulfilled'));
    expect(requests).toBe(20);
  } finally {
    client.destroy();
  }
}, 60_000);
