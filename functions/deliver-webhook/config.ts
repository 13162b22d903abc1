/**
 * The delivery's settings: `RETRY_QUEUE_URL`, `DEAD_LETTER_QUEUE_URL`, `SUBSCRIBERS` (JSON, no
 * secrets), `SECRETS_MANAGER_ENDPOINT` (`sam local`), and the endpoint stores' and key's.
 */
import * as v from 'valibot';
import {
  isSet,
  optional,
  parsed,
  parseJson,
  readConfiguration,
  required,
} from '../shared/platform/configuration.ts';
import {
  endpointStoreSettingsOf,
  endpointStoreVariables,
  endpointUrlsVariable,
  secretsKeySettingsOf,
  secretsKeyVariables,
} from '../webhook-endpoints/endpoint-config.ts';

/** The stage's subscribers as `SUBSCRIBERS` lists them: their secrets stay in Secrets Manager. */
const subscribersSchema = v.array(
  v.object({ name: v.string(), url: v.string(), secretArn: v.string() }),
);

const deliveryVariables = {
  RETRY_QUEUE_URL: required(),
  DEAD_LETTER_QUEUE_URL: required(),
  SUBSCRIBERS: parsed(parseJson(subscribersSchema, 'a JSON array of {name, url, secretArn}')),
  SECRETS_MANAGER_ENDPOINT: optional,
};

export function readDeliverConfig(environment: NodeJS.ProcessEnv) {
  const config = readConfiguration('deliver-webhook', deliveryVariables, environment);
  const settings = {
    retryQueueUrl: config.RETRY_QUEUE_URL,
    deadLetterQueueUrl: config.DEAD_LETTER_QUEUE_URL,
    subscribers: config.SUBSCRIBERS,
    secretsManagerUrl: config.SECRETS_MANAGER_ENDPOINT,
  };
  // Where the stage has webhook endpoints (every deployed one): their stores, key and URLs.
  if (!isSet(environment, 'ENDPOINTS_TABLE_NAME')) return { ...settings, endpoints: undefined };
  const variables = {
    ...endpointStoreVariables,
    ...secretsKeyVariables,
    WEBHOOK_ENDPOINT_URLS: endpointUrlsVariable(environment),
  };
  const endpoints = readConfiguration('deliver-webhook', variables, environment);
  return {
    ...settings,
    endpoints: {
      ...endpointStoreSettingsOf(endpoints),
      ...secretsKeySettingsOf(endpoints),
      urlPolicy: endpoints.WEBHOOK_ENDPOINT_URLS,
    },
  };
}
