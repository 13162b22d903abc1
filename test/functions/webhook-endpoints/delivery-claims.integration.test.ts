/**
 * The delivery claims of the webhook log on DynamoDB Local: a release ends only the claim as its
 * caller wrote it, never one a running delivery renewed under the same delivery id.
 *
 * @services dynamodb-local
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { createDocumentClient } from '../../../functions/shared/platform/dynamodb.ts';
import {
  attemptHoldMilliseconds,
  claimDelivery,
  deliveryStates,
  endDelivery,
  type WebhookLogTable,
} from '../../../functions/webhook-endpoints/webhook-log.ts';
import { createWebhookEndpointTablesIfMissing } from '../../../local/tables.ts';
import { testStoreUrl } from '../../support/test-store.ts';

let log: WebhookLogTable;

beforeAll(async () => {
  const documentClient = createDocumentClient({ url: testStoreUrl() });
  const suffix = randomUUID();
  await createWebhookEndpointTablesIfMissing(documentClient, {
    endpoints: `endpoints-${suffix}`,
    log: `log-${suffix}`,
  });
  log = { documentClient, logTableName: `log-${suffix}` };
});

afterAll(() => log.documentClient.destroy());

it('releases a recover’s claim as it wrote it, and keeps one its delivery renewed meanwhile', async () => {
  const claimedAt = 1_000_000;
  for (const webhookId of ['msg_released', 'msg_renewed']) {
    await expect(claimDelivery('ep_1', webhookId, 'delivery-1', claimedAt, log)).resolves.toBe(
      'claimed',
    );
  }
  // The delivery of the second has started: it renews its claim, same id, later.
  await expect(
    claimDelivery('ep_1', 'msg_renewed', 'delivery-1', claimedAt + 5, log, { attempt: 1 }),
  ).resolves.toBe('claimed');
  for (const webhookId of ['msg_released', 'msg_renewed']) {
    await endDelivery('ep_1', webhookId, 'delivery-1', log, claimedAt);
  }
  const states = await deliveryStates('ep_1', ['msg_released', 'msg_renewed'], log);
  expect(states.get('msg_released')?.state).toBe('ended');
  expect(states.get('msg_renewed')?.state).toBe('pending');
});

it('holds an attempt against a copy of its message until the attempt ends, and for good once a later one is made', async () => {
  const at = 2_000_000;
  const claim = (attempt: number, now: number) =>
    claimDelivery('ep_1', 'msg_copied', 'delivery-2', now, log, { attempt });
  await expect(claim(1, at)).resolves.toBe('claimed');
  // A copy of the first attempt's message, side by side: it waits for the attempt's end.
  await expect(claim(1, at + 10)).resolves.toEqual({ pendingUntil: at + attemptHoldMilliseconds });
  // The delivery's own next attempt, and a message back after its attempt died, are not held.
  await expect(claim(2, at + 20)).resolves.toBe('claimed');
  await expect(claim(2, at + 20 + attemptHoldMilliseconds + 1)).resolves.toBe('claimed');
  // A copy of an earlier attempt, once a later one was made, is spent: it never claims again.
  const spent = await claim(1, at + 10 * attemptHoldMilliseconds);
  expect(spent).toEqual({ pendingUntil: expect.any(Number) });
  expect((spent as { pendingUntil: number }).pendingUntil - at).toBeGreaterThan(60 * 60 * 1000);
  // Another delivery of the event (a recover's) is held off as before.
  await expect(
    claimDelivery('ep_1', 'msg_copied', 'delivery-3', at + 40, log, { holdMilliseconds: 1 }),
  ).resolves.toEqual({ pendingUntil: expect.any(Number) });
});
