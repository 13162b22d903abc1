/** What every function on the plants table shares: its dependencies and its configuration. */
import { allowedOriginsVariable } from '../http/cors.ts';
import type { RouteHandlerOptions } from '../http/route-handler.ts';
import { optional, readConfiguration, required } from '../platform/configuration.ts';
import { createDocumentClient, type StoreDependencies } from '../platform/dynamodb.ts';

/** What a plants function needs: the plants table, and what every route function takes. */
export type PlantsFunctionDependencies = StoreDependencies & RouteHandlerOptions;

/** `TABLE_NAME`, `DYNAMODB_ENDPOINT` and `CORS_ALLOWED_ORIGINS`. @throws {ConfigurationError} */
export function readTableFunctionConfig(
  functionName: string,
  environment: NodeJS.ProcessEnv = process.env,
) {
  const variables = readConfiguration(
    functionName,
    {
      TABLE_NAME: required('the plants table'),
      DYNAMODB_ENDPOINT: optional,
      CORS_ALLOWED_ORIGINS: allowedOriginsVariable(),
    },
    environment,
  );
  return {
    tableName: variables.TABLE_NAME,
    dynamoDbUrl: variables.DYNAMODB_ENDPOINT,
    allowedOrigins: variables.CORS_ALLOWED_ORIGINS,
  };
}

/** A plants function's dependencies, from its environment, once at cold start. */
export function plantsFunctionDependencies(functionName: string): PlantsFunctionDependencies {
  const { dynamoDbUrl, ...config } = readTableFunctionConfig(functionName);
  return { documentClient: createDocumentClient({ url: dynamoDbUrl }), ...config };
}
