/**
 * The fan-out's settings from its environment, and its dependencies built from them: the same
 * for the fan-out and the stream-failure replay.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { type EnvironmentReader, parseJson } from '../shared/platform/environment.ts';
import { sqsDeliveryQueue } from '../shared/webhooks/delivery-queue.ts';
import { type Subscription, subscriptionOf } from '../shared/webhooks/plant-events.ts';
import {
  type FanoutDependencies,
  fixedSubscriptions,
} from '../shared/webhooks/queue-deliveries.ts';
import {
  type EndpointStoreSettings,
  endpointStoresOf,
  readEndpointStoreSettings,
} from './endpoint-config.ts';
import { withEndpointSubscriptions } from './endpoint-subscriptions.ts';
import { eventLogOf } from './webhook-log.ts';

/**
 * The fan-out's settings, read with `read` (the replay reads them too); `read.check()` after.
 * The endpoint stores are there when `ENDPOINTS_TABLE_NAME` is (every deployed stage has them).
 */
export function readFanoutSettings(read: EnvironmentReader) {
  return {
    deliveryQueueUrl: read.string('DELIVERY_QUEUE_URL'),
    subscriptions: read.parse('SUBSCRIPTIONS', parseSubscriptions),
    ...(read.optional('ENDPOINTS_TABLE_NAME') === undefined
      ? {}
      : { endpoints: readEndpointStoreSettings(read) }),
  };
}

/** `SUBSCRIPTIONS`: a JSON array of `{name, events?, format?}`, each checked. */
function parseSubscriptions(text: string): Subscription[] {
  const value = parseJson(isSubscriptionList, 'a JSON array of {name, events, format}')(text);
  return value.map((entry) => subscriptionOf(entry.name, entry));
}

function isSubscriptionList(
  value: unknown,
): value is { name: string; events?: string[]; format?: string }[] {
  return (
    Array.isArray(value) &&
    value.every(
      (entry) =>
        typeof entry?.name === 'string' &&
        (entry.events === undefined ||
          (Array.isArray(entry.events) &&
            entry.events.every((type: unknown) => typeof type === 'string'))) &&
        (entry.format === undefined || typeof entry.format === 'string'),
    )
  );
}

/**
 * The fan-out's dependencies (the replay's too): the delivery queue, the stage's subscriptions,
 * and, where the stage has endpoint stores, the enabled endpoints and the webhook log.
 */
export function fanoutDependenciesOf(
  settings: {
    readonly deliveryQueueUrl: string;
    readonly subscriptions: readonly Subscription[];
    readonly endpoints?: EndpointStoreSettings;
  },
  sqs: Pick<SQSClient, 'send'>,
): FanoutDependencies {
  const deliveries = sqsDeliveryQueue(sqs, settings.deliveryQueueUrl);
  if (settings.endpoints === undefined) {
    return { deliveries, subscriptions: fixedSubscriptions(settings.subscriptions) };
  }
  const stores = endpointStoresOf(settings.endpoints);
  return {
    deliveries,
    subscriptions: withEndpointSubscriptions(settings.subscriptions, stores),
    eventLog: eventLogOf(stores),
  };
}
