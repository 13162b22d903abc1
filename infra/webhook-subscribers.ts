import { type Subscription, subscriptionOf } from '../functions/shared/webhooks/plant-events.ts';
import type { WebhookSubscriberConfig } from './stages.ts';

/** Each subscriber's subscription, once its name, URL, event types and format are checked. */
export function checkSubscribers(subscribers: readonly WebhookSubscriberConfig[]): Subscription[] {
  const names = new Set<string>();
  const subscriptions: Subscription[] = [];
  for (const { name, url, events, format } of subscribers) {
    if (!/^[a-z0-9-]{1,40}$/.test(name) || names.has(name)) {
      throw new Error(`Webhook subscriber names must be unique lower-case words, got "${name}".`);
    }
    names.add(name);
    if (!URL.canParse(url) || new URL(url).protocol !== 'https:') {
      throw new Error(`Webhook subscriber ${name} must have an https URL, got "${url}".`);
    }
    // The URL is in the template and the function's environment: no credential may hide in it
    // (the signature is what proves the sender).
    const { username, password, search } = new URL(url);
    if (username !== '' || password !== '' || search !== '') {
      throw new Error(
        `Webhook subscriber ${name}'s URL must carry no user, password or query string: the secret signs each webhook instead.`,
      );
    }
    subscriptions.push(subscriptionOf(name, { events, format }));
  }
  return subscriptions;
}
