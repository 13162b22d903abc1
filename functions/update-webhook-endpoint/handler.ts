/**
 * Lambda entry of `PATCH /webhook-endpoints/{endpointId}`. Environment, read once at cold start: `ENDPOINTS_TABLE_NAME`,
 * `WEBHOOK_LOG_TABLE_NAME`, `DYNAMODB_ENDPOINT` and `CORS_ALLOWED_ORIGINS`.
 */
import { createDocumentClient } from '../shared/platform/dynamodb.ts';
import {
  readEndpointFunctionConfig,
  readEndpointUrlPolicy,
} from '../webhook-endpoints/endpoint-config.ts';
import { createHandler } from './create-handler.ts';

const { dynamoDbEndpoint, ...config } = readEndpointFunctionConfig(
  'update-webhook-endpoint',
  process.env,
  (read) => ({ urlPolicy: readEndpointUrlPolicy(read, process.env) }),
);

/** The Lambda entry; the client is created once per container and reused by warm invocations. */
export const handler = createHandler({
  documentClient: createDocumentClient({ endpoint: dynamoDbEndpoint }),
  ...config,
});
