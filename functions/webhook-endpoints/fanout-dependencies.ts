/** The fan-out's settings and dependencies, for the fan-out and the stream-failure replay alike. */
import type { SQSClient } from '@aws-sdk/client-sqs';
import * as v from 'valibot';
import { isSet, optional, parsed, parseJson, required } from '../shared/platform/configuration.ts';
import { sqsDeliveryQueue } from '../shared/webhooks/delivery-queue.ts';
import { type Subscription, subscriptionOf } from '../shared/webhooks/plant-events.ts';
import {
  type FanoutDependencies,
  fixedSubscriptions,
} from '../shared/webhooks/queue-deliveries.ts';
import {
  type EndpointStoreSettings,
  endpointStoreSettingsOf,
  endpointStoresOf,
  endpointStoreVariables,
} from './endpoint-config.ts';
import { withEndpointSubscriptions } from './endpoint-subscriptions.ts';
import { eventLogOf } from './webhook-log.ts';

/**
 * The fan-out's and the replay's variables; the endpoint stores' are required together once
 * `ENDPOINTS_TABLE_NAME` is set (as every deployed stage does).
 */
export function fanoutVariables(environment: Readonly<Record<string, string | undefined>>) {
  return {
    DELIVERY_QUEUE_URLS: required(),
    SUBSCRIPTIONS: parsed(parseSubscriptions),
    ...(isSet(environment, 'ENDPOINTS_TABLE_NAME')
      ? endpointStoreVariables
      : {
          ENDPOINTS_TABLE_NAME: optional,
          WEBHOOK_LOG_TABLE_NAME: optional,
          DYNAMODB_ENDPOINT: optional,
        }),
  };
}

export function fanoutSettingsOf(variables: {
  readonly DELIVERY_QUEUE_URLS: string;
  readonly SUBSCRIPTIONS: Subscription[];
  readonly ENDPOINTS_TABLE_NAME?: string | undefined;
  readonly WEBHOOK_LOG_TABLE_NAME?: string | undefined;
  readonly DYNAMODB_ENDPOINT?: string | undefined;
}) {
  const { ENDPOINTS_TABLE_NAME, WEBHOOK_LOG_TABLE_NAME } = variables;
  return {
    deliveryQueueUrls: variables.DELIVERY_QUEUE_URLS,
    subscriptions: variables.SUBSCRIPTIONS,
    ...(ENDPOINTS_TABLE_NAME === undefined || WEBHOOK_LOG_TABLE_NAME === undefined
      ? {}
      : {
          endpoints: endpointStoreSettingsOf({
            ...variables,
            ENDPOINTS_TABLE_NAME,
            WEBHOOK_LOG_TABLE_NAME,
          }),
        }),
  };
}

/** The stage's subscribers as `SUBSCRIPTIONS` lists them. */
const subscriptionsSchema = v.array(
  v.object({
    name: v.string(),
    events: v.optional(v.array(v.string())),
    format: v.optional(v.string()),
  }),
);

/** `SUBSCRIPTIONS`: a JSON array of `{name, events?, format?}`, each checked. */
function parseSubscriptions(text: string): Subscription[] {
  const value = parseJson(subscriptionsSchema, 'a JSON array of {name, events, format}')(text);
  return value.map((entry) => subscriptionOf(entry.name, entry));
}

/** The fan-out's and the replay's dependencies; endpoints and the log where the stage has them. */
export function fanoutDependenciesOf(
  settings: {
    readonly deliveryQueueUrls: string;
    readonly subscriptions: readonly Subscription[];
    readonly endpoints?: EndpointStoreSettings;
  },
  sqs: Pick<SQSClient, 'send'>,
): FanoutDependencies {
  const deliveries = sqsDeliveryQueue(sqs, settings.deliveryQueueUrls);
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
