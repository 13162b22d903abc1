/**
 * An attempt the store puts off (its target could not be read): no attempt is spent, and the same
 * one comes back in seconds, doubling while the store stays away, never later than its retry.
 */
import { expect, it } from '@jest/globals';
import { StoreUnavailableError } from '../../../../functions/shared/errors/errors.ts';
import { createLogger } from '../../../../functions/shared/platform/logger.ts';
import { attemptDelivery } from '../../../../functions/shared/webhooks/attempt-delivery.ts';
import {
  type DeliveryMessage,
  firstDeliveryMessage,
  parseDeliveryMessages,
} from '../../../../functions/shared/webhooks/delivery-message.ts';

let now = 1_000_000;
const storeAway = {
  resolve: async () => {
    throw new StoreUnavailableError();
  },
};
const options = { logger: createLogger({}, () => {}), now: () => now };

it('puts off an attempt by 5 s, then 10, 20 …, whatever its number, and spends none', async () => {
  // The seventh attempt, whose retry would wait 10 hours.
  let message: DeliveryMessage = {
    ...firstDeliveryMessage({ webhookId: 'msg_1', payload: '{}' }, 'audit', now),
    attempt: 7,
  };
  const waits: number[] = [];
  for (let putOff = 0; putOff < 4; putOff += 1) {
    const step = await attemptDelivery(message, storeAway, options);
    if (step.kind !== 'later') throw new Error(`Not put off: ${step.kind}`);
    waits.push((step.message.dueAt - now) / 1000);
    expect(step.message.attempt).toBe(7);
    // What the queue carries is what the next turn reads, when it is due.
    [message] = parseDeliveryMessages(JSON.stringify(step.message), now) as [DeliveryMessage];
    now = message.dueAt;
  }
  expect(waits).toEqual([5, 10, 20, 40]);
});

it('never puts off an attempt beyond its own retry delay', async () => {
  const message = {
    ...firstDeliveryMessage({ webhookId: 'msg_2', payload: '{}' }, 'audit', now),
    putOffs: 9,
  };
  const step = await attemptDelivery(message, storeAway, options);
  // The first attempt's retry comes 5 s after it.
  expect(step.kind === 'later' && (step.message.dueAt - now) / 1000).toBe(5);
});
