/**
 * The delivery's settings: `RETRY_QUEUE_URL`, `DEAD_LETTER_QUEUE_URL`, `SUBSCRIBERS` (a JSON
 * array of `{name, url, secretArn}`; the secrets themselves stay in Secrets Manager),
 * `SECRETS_MANAGER_ENDPOINT` (optional; empty means AWS's, and `sam local` points it at an
 * emulator, as the table functions' `DYNAMODB_ENDPOINT`), and, where the stage has webhook
 * endpoints (every deployed one), their stores and key: `ENDPOINTS_TABLE_NAME`,
 * `WEBHOOK_LOG_TABLE_NAME`, `DYNAMODB_ENDPOINT`, `SECRETS_KEY_ID`, `KMS_ENDPOINT`.
 */
import { parseJson, readEnvironment } from '../shared/platform/environment.ts';
import {
  readEndpointStoreSettings,
  readEndpointUrlPolicy,
  readSecretsKeySettings,
} from '../webhook-endpoints/endpoint-config.ts';
import type { ConfiguredSubscriber } from './create-handler.ts';

/** The configuration from the environment; anything missing fails the cold start. */
export function readDeliverConfig(environment: NodeJS.ProcessEnv) {
  const read = readEnvironment(environment, 'deliver-webhook');
  const config = {
    retryQueueUrl: read.string('RETRY_QUEUE_URL'),
    deadLetterQueueUrl: read.string('DEAD_LETTER_QUEUE_URL'),
    subscribers: read.parse(
      'SUBSCRIBERS',
      parseJson(isSubscriberList, 'a JSON array of {name, url, secretArn}'),
    ),
    secretsManagerEndpoint: read.optional('SECRETS_MANAGER_ENDPOINT'),
    ...(read.optional('ENDPOINTS_TABLE_NAME') === undefined
      ? {}
      : {
          endpoints: {
            ...readEndpointStoreSettings(read),
            ...readSecretsKeySettings(read),
            urlPolicy: readEndpointUrlPolicy(read, environment),
          },
        }),
  };
  read.check();
  return config;
}

function isSubscriberList(value: unknown): value is ConfiguredSubscriber[] {
  return (
    Array.isArray(value) &&
    value.every(
      (entry) =>
        typeof entry?.name === 'string' &&
        typeof entry?.url === 'string' &&
        typeof entry?.secretArn === 'string',
    )
  );
}
