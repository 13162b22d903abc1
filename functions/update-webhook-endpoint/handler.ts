/**
 * Lambda entry of `PATCH /webhook-endpoints/{endpointId}`. Environment, read once at cold start: `ENDPOINTS_TABLE_NAME`,
 * `WEBHOOK_LOG_TABLE_NAME`, `DYNAMODB_ENDPOINT` and `CORS_ALLOWED_ORIGINS`.
 */

import { readConfiguration } from '../shared/platform/configuration.ts';
import { createDocumentClient } from '../shared/platform/dynamodb.ts';
import {
  endpointFunctionSettingsOf,
  endpointFunctionVariables,
  endpointUrlsVariable,
} from '../webhook-endpoints/endpoint-config.ts';
import { createHandler } from './create-handler.ts';

const variables = readConfiguration(
  'update-webhook-endpoint',
  { ...endpointFunctionVariables, WEBHOOK_ENDPOINT_URLS: endpointUrlsVariable(process.env) },
  process.env,
);
const { dynamoDbUrl, ...config } = endpointFunctionSettingsOf(variables);

export const handler = createHandler({
  documentClient: createDocumentClient({ url: dynamoDbUrl }),
  urlPolicy: variables.WEBHOOK_ENDPOINT_URLS,
  ...config,
});
