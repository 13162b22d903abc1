/**
 * The `POST /plants` handler (API Gateway REST API, proxy integration, payload v1), the adapter
 * between the HTTP event and {@link createPlant}, built around its dependencies. Free of
 * module-scope effects so that the local API and tests can import it without a Lambda
 * environment; `handler.ts` is the Lambda entry.
 */

import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { apiResponses, jsonResponse } from '../shared/api-responses.ts';
import { createLogger } from '../shared/logger.ts';
import { entityTagOf } from '../shared/plant-version.ts';
import type { TableHandlerDependencies } from '../shared/table-function.ts';
import { createPlant } from './create-plant.ts';
import { readNewPlant } from './read-new-plant.ts';

/** Builds the middy handler around its dependencies (the local API and tests bring their own). */
export function createHandler(dependencies: TableHandlerDependencies) {
  const logger = dependencies.logger ?? createLogger({ service: 'create-plant' });
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(apiResponses({ logger, allowedOrigins: dependencies.allowedOrigins ?? [] }))
    .handler(async (event) => {
      const newPlant = readNewPlant(event);
      const { plant, version } = await createPlant(newPlant, dependencies);
      return jsonResponse(200, plant, { ETag: entityTagOf(version) });
    });
}
