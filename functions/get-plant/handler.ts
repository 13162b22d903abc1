/**
 * Lambda entry of `GET /plants/{id}`. Environment, read once at cold start: `TABLE_NAME`
 * (required), `DYNAMODB_ENDPOINT` (optional, for DynamoDB Local or `sam local`).
 */

import { readTableFunctionConfig } from '../shared/plants/plants-function.ts';
import { createDocumentClient } from '../shared/platform/dynamodb.ts';
import { createHandler } from './create-handler.ts';

const config = readTableFunctionConfig('get-plant');

export const handler = createHandler({
  documentClient: createDocumentClient({ url: config.dynamoDbUrl }),
  tableName: config.tableName,
  allowedOrigins: config.allowedOrigins,
});
