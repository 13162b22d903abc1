/**
 * The settings of `POST /webhook-endpoints/{endpointId}/test`: the endpoint functions' (`ENDPOINTS_TABLE_NAME`,
 * `WEBHOOK_LOG_TABLE_NAME`, `DYNAMODB_ENDPOINT`, `CORS_ALLOWED_ORIGINS`) and the delivery queue
 * its events are queued on (`DELIVERY_QUEUE_URL`).
 */
import { readEndpointFunctionConfig } from '../webhook-endpoints/endpoint-config.ts';

/** The configuration from the environment; anything missing fails the cold start. */
export function readConfig(environment: NodeJS.ProcessEnv) {
  return readEndpointFunctionConfig('test-webhook-endpoint', environment, (read) => ({
    deliveryQueueUrl: read.string('DELIVERY_QUEUE_URL'),
  }));
}
