/**
 * What every function on the plants table shares: its dependencies and its configuration.
 */
import { checkAllowedOrigins } from '../http/cors.ts';
import type { RouteHandlerOptions } from '../http/route-handler.ts';
import type { StoreDependencies } from '../platform/dynamodb.ts';
import { commaList, readEnvironment } from '../platform/environment.ts';

/** What a plants function needs: the plants table, and what every route function takes. */
export type PlantsFunctionDependencies = StoreDependencies & RouteHandlerOptions;

export interface TableFunctionConfig {
  readonly tableName: string;
  /** A DynamoDB-compatible endpoint (DynamoDB Local, `sam local`); AWS's when absent. */
  readonly endpoint: string | undefined;
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
  const read = readEnvironment(environment, functionName);
  const config = {
    tableName: read.string('TABLE_NAME', { description: 'the plants table' }),
    endpoint: read.optional('DYNAMODB_ENDPOINT'),
    allowedOrigins: read.parse(
      'CORS_ALLOWED_ORIGINS',
      (text) => checkAllowedOrigins(commaList(text), { anyOrigin: true, anyPort: false }),
      { fallback: [] },
    ),
  };
  read.check();
  return config;
}
