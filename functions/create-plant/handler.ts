/**
 * Lambda entry of `POST /plants`. Environment, read once at cold start: `TABLE_NAME` (required),
 * `DYNAMODB_ENDPOINT` (optional, for DynamoDB Local or `sam local`).
 */
import { createDocumentClient } from '../shared/dynamodb.ts';
import { createHandler, readCreatePlantConfig } from './create-handler.ts';

export { type CreatePlantHandlerDependencies, createHandler } from './create-handler.ts';

const config = readCreatePlantConfig();

/** The Lambda entry; the client is created once per container and reused by warm invocations. */
export const handler = createHandler({
  documentClient: createDocumentClient(
    config.endpoint === undefined ? {} : { endpoint: config.endpoint },
  ),
  tableName: config.tableName,
});
