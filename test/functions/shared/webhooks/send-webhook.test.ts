/**
 * Sending one webhook: a connection that fails as it is made is a failed attempt, never an
 * error thrown at the process. The addresses used here fail inside `connect()` itself, before
 * any packet leaves (the broadcast address and an IPv6 multicast one: the kernel refuses both at
 * once, as it refuses an address it has no route to).
 */
import { expect, it } from '@jest/globals';
import { sendWebhook } from '../../../../functions/shared/webhooks/send-webhook.ts';

const subscriber = {
  name: 'ipv6-only',
  url: 'https://ipv6-only.example.com/hooks',
  secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
};
const event = { webhookId: 'msg_1_v1', payload: '{"id":1,"name":"Fern"}', version: 1 };

it.each([
  ['255.255.255.255', 'https://ipv6-only.example.com/hooks'],
  ['ff02::1', 'https://ipv6-only.example.com/hooks'],
  ['255.255.255.255', 'http://ipv6-only.example.com:8080/hooks'],
])('records a connect to %s that fails at once (%s) as a failed attempt', async (address, url) => {
  const outcome = await sendWebhook(event, { ...subscriber, url }, { address });
  expect(outcome).toEqual({ delivered: false, failure: 'request failed: ENETUNREACH' });
});
