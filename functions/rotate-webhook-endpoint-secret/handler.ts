/**
 * Lambda entry of `POST /webhook-endpoints/{endpointId}/secret/rotate`. Environment, read once at cold start: see `config.ts`.
 */
import { createDocumentClient } from '../shared/platform/dynamodb.ts';
import { kmsSealerOf } from '../webhook-endpoints/endpoint-config.ts';
import { readConfig } from './config.ts';
import { createHandler } from './create-handler.ts';

const { dynamoDbEndpoint, secretsKeyId, kmsEndpoint, ...config } = readConfig(process.env);

export const handler = createHandler({
  documentClient: createDocumentClient({ endpoint: dynamoDbEndpoint }),
  secretBox: kmsSealerOf({ secretsKeyId, kmsEndpoint }),
  ...config,
});
