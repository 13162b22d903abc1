/**
 * Lambda entry of `DELETE /webhook-endpoints/{endpointId}`. Environment, read once at cold start: `ENDPOINTS_TABLE_NAME`,
 * `WEBHOOK_LOG_TABLE_NAME`, `DYNAMODB_ENDPOINT` and `CORS_ALLOWED_ORIGINS`.
 */
import { createDocumentClient } from '../shared/platform/dynamodb.ts';
import { readEndpointFunctionConfig } from '../webhook-endpoints/endpoint-config.ts';
import { createHandler } from './create-handler.ts';

const { dynamoDbUrl, ...config } = readEndpointFunctionConfig(
  'delete-webhook-endpoint',
  process.env,
);

export const handler = createHandler({
  documentClient: createDocumentClient({ url: dynamoDbUrl }),
  ...config,
});
