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
    claimDelivery('ep_1', 'msg_renewed', 'delivery-1', claimedAt + 5, log),
  ).resolves.toBe('claimed');
  for (const webhookId of ['msg_released', 'msg_renewed']) {
    await endDelivery('ep_1', webhookId, 'delivery-1', log, claimedAt);
  }
  const states = await deliveryStates('ep_1', ['msg_released', 'msg_renewed'], log);
  expect(states.get('msg_released')?.state).toBe('ended');
  expect(states.get('msg_renewed')?.state).toBe('pending');
});
