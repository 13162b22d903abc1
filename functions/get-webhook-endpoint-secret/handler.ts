/**
 * Lambda entry of `GET /webhook-endpoints/{endpointId}/secret`. Environment, read once at cold start: see `config.ts`.
 */
import { createDocumentClient } from '../shared/platform/dynamodb.ts';
import { kmsOpenerOf } from '../webhook-endpoints/endpoint-config.ts';
import { readConfig } from './config.ts';
import { createHandler } from './create-handler.ts';

const { dynamoDbEndpoint, secretsKeyId, kmsEndpoint, ...config } = readConfig(process.env);

export const handler = createHandler({
  documentClient: createDocumentClient({ endpoint: dynamoDbEndpoint }),
  secretBox: kmsOpenerOf({ secretsKeyId, kmsEndpoint }),
  ...config,
});
