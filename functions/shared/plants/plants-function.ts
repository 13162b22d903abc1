/**
 * What every function on the plants table shares: its dependencies, its configuration, and the
 * middy handler around its work.
 */

import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { apiResponses } from '../http/api-responses.ts';
import { checkAllowedOrigins } from '../http/cors.ts';
import type { StoreDependencies } from '../platform/dynamodb.ts';
import { commaList, readEnvironment } from '../platform/environment.ts';
import { createLogger, invocationLoggers, type Logger } from '../platform/logger.ts';

/**
 * The dependencies of a plants-table handler (the local API and tests bring their own): what its
 * store operation needs, passed on as they are, and its logger.
 */
export interface TableHandlerDependencies extends StoreDependencies {
  readonly logger?: Logger;
  /** The origins whose pages may read the answers (`cors.ts`); none when absent. */
  readonly allowedOrigins?: readonly string[];
}

/** The dependencies a handler's work gets: those given, with their logger. */
export type TableWorkDependencies = TableHandlerDependencies & { readonly logger: Logger };

/**
 * The middy handler of a plants-table function: `apiResponses` (every failure in the Error
 * shape, the stage's CORS headers, one log line per request) around `work`, which gets the
 * dependencies with the invocation's logger (from one named after `service` when none was given).
 */
export function createTableHandler(
  service: string,
  dependencies: TableHandlerDependencies,
  work: (
    event: APIGatewayProxyEvent,
    dependencies: TableWorkDependencies,
  ) => Promise<APIGatewayProxyResult>,
) {
  const loggerOf = invocationLoggers(dependencies.logger ?? createLogger({ service }));
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(apiResponses({ loggerOf, allowedOrigins: dependencies.allowedOrigins ?? [] }))
    .handler((event, context) => work(event, { ...dependencies, logger: loggerOf(context) }));
}

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
