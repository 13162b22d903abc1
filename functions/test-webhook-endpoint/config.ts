/**
 * The settings of `POST /webhook-endpoints/{endpointId}/test`: the endpoint functions' (`ENDPOINTS_TABLE_NAME`,
 * `WEBHOOK_LOG_TABLE_NAME`, `DYNAMODB_ENDPOINT`, `CORS_ALLOWED_ORIGINS`) and the delivery queue
 * its events are queued on (`DELIVERY_QUEUE_URL`).
 */
import { readConfiguration, required } from '../shared/platform/configuration.ts';
import {
  endpointFunctionSettingsOf,
  endpointFunctionVariables,
} from '../webhook-endpoints/endpoint-config.ts';

export function readConfig(environment: NodeJS.ProcessEnv) {
  const variables = readConfiguration(
    'test-webhook-endpoint',
    { ...endpointFunctionVariables, DELIVERY_QUEUE_URL: required() },
    environment,
  );
  return {
    ...endpointFunctionSettingsOf(variables),
    deliveryQueueUrl: variables.DELIVERY_QUEUE_URL,
  };
}
