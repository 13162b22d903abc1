/**
 * What every function on the plants table shares: its dependencies and its configuration.
 */
import { checkAllowedOrigins } from '../http/cors.ts';
import type { RouteHandlerOptions } from '../http/route-handler.ts';
import {
  commaList,
  optional,
  parsed,
  readConfiguration,
  required,
} from '../platform/configuration.ts';
import type { StoreDependencies } from '../platform/dynamodb.ts';

/** What a plants function needs: the plants table, and what every route function takes. */
export type PlantsFunctionDependencies = StoreDependencies & RouteHandlerOptions;

export interface TableFunctionConfig {
  readonly tableName: string;
  /** A DynamoDB-compatible store's URL (DynamoDB Local, `sam local`); AWS's when absent. */
  readonly dynamoDbUrl: string | undefined;
  /** The stage's allowed origins; none when the stage allows no cross-origin page. */
  readonly allowedOrigins: readonly string[];
}

/**
 * The configuration from the environment, read once at cold start: `TABLE_NAME` (required) and
 * `DYNAMODB_ENDPOINT` (optional; empty means AWS's regional endpoint, which is how the stack
 * declares it so that `sam local invoke --env-vars` can override it) and `CORS_ALLOWED_ORIGINS`
 * (optional, comma-separated; the stack checked them).
 *
 * @throws {ConfigurationError} naming the function and the variable when `TABLE_NAME` is missing.
 */
export function readTableFunctionConfig(
  functionName: string,
  environment: NodeJS.ProcessEnv = process.env,
): TableFunctionConfig {
  const variables = readConfiguration(
    functionName,
    {
      TABLE_NAME: required('the plants table'),
      DYNAMODB_ENDPOINT: optional,
      CORS_ALLOWED_ORIGINS: parsed(
        (text) => checkAllowedOrigins(commaList(text), { anyOrigin: true, anyPort: false }),
        { fallback: [] as readonly string[] },
      ),
    },
    environment,
  );
  return {
    tableName: variables.TABLE_NAME,
    dynamoDbUrl: variables.DYNAMODB_ENDPOINT,
    allowedOrigins: variables.CORS_ALLOWED_ORIGINS,
  };
}
