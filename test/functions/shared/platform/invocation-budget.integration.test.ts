/**
 * Store calls within an invocation's time, on DynamoDB Local behind a proxy that slows it: each
 * call under its own deadline, yet together more than the function has left. The work stops with
 * a 503 before the margin, and what runs on the margin (a release) still runs.
 *
 * @services dynamodb-local
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { type FaultProxy, startFaultProxy } from '../../../../beds/fault-proxy.ts';
import { StoreUnavailableError } from '../../../../functions/shared/errors/errors.ts';
import {
  createDocumentClient,
  sendToStore,
} from '../../../../functions/shared/platform/dynamodb.ts';
import {
  onMargin,
  withinInvocationBudget,
} from '../../../../functions/shared/platform/invocation-budget.ts';
import { createTestTable, type TestTable } from '../../../support/test-store.ts';

let table: TestTable;
let proxy: FaultProxy;

beforeAll(async () => {
  table = await createTestTable();
  proxy = await startFaultProxy(table.url);
});

afterAll(async () => {
  await proxy.stop();
  await table.remove();
});

it('stops the work with a 503 when the function’s time runs out, and runs the release on the margin', async () => {
  const store = { documentClient: createDocumentClient({ url: proxy.url }) };
  const read = () =>
    sendToStore(store, new GetCommand({ TableName: table.tableName, Key: { id: 1n } }));
  // Each read takes a few hundred milliseconds: under its 3 s deadline, but 20 of them are not.
  proxy.slow(150);
  const deadline = Date.now() + 4_000;
  const left = () => deadline - Date.now();
  let reads = 0;
  let released = false;
  const work = withinInvocationBudget({ getRemainingTimeInMillis: left }, 2_000, async () => {
    try {
      for (; reads < 20; reads += 1) await read();
    } finally {
      await onMargin(async () => {
        await read();
        released = true;
      });
    }
  });
  await expect(work).rejects.toBeInstanceOf(StoreUnavailableError);
  proxy.slow(0);
  store.documentClient.destroy();
  // Stopped part-way, released, and all before the function's end.
  expect(reads).toBeLessThan(20);
  expect(released).toBe(true);
  expect(left()).toBeGreaterThan(0);
});
