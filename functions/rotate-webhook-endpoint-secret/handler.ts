/**
 * Lambda entry of `POST /webhook-endpoints/{endpointId}/secret/rotate`. Environment, read once at cold start: see `config.ts`.
 */
import { createDocumentClient } from '../shared/platform/dynamodb.ts';
import { kmsSealerOf } from '../webhook-endpoints/endpoint-config.ts';
import { readConfig } from './config.ts';
import { createHandler } from './create-handler.ts';

const { dynamoDbUrl, secretsKeyId, kmsUrl, ...config } = readConfig(process.env);

export const handler = createHandler({
  documentClient: createDocumentClient({ url: dynamoDbUrl }),
  secretBox: kmsSealerOf({ secretsKeyId, kmsUrl }),
  ...config,
});
