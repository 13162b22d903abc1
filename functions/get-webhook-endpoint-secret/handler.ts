/**
 * Lambda entry of `GET /webhook-endpoints/{endpointId}/secret`. Environment, read once at cold start: see `config.ts`.
 */
import { createDocumentClient } from '../shared/platform/dynamodb.ts';
import { kmsOpenerOf } from '../webhook-endpoints/endpoint-config.ts';
import { readConfig } from './config.ts';
import { createHandler } from './create-handler.ts';

const { dynamoDbUrl, secretsKeyId, kmsUrl, ...config } = readConfig(process.env);

export const handler = createHandler({
  documentClient: createDocumentClient({ url: dynamoDbUrl }),
  secretBox: kmsOpenerOf({ secretsKeyId, kmsUrl }),
  ...config,
});
