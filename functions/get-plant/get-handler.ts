/**
 * The `GET /plants/{id}` handler: the id from the path, the plant as a StoredPlant (exact id).
 * Free of module-scope effects; `handler.ts` is the Lambda entry.
 */
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { apiResponses, jsonTextResponse } from '../shared/api-responses.ts';
import { createLogger } from '../shared/logger.ts';
import { readPlantIdParameter } from '../shared/request.ts';
import { stringifyStoredPlant } from '../shared/stored-plant.ts';
import type { TableHandlerDependencies } from '../shared/table-function.ts';
import { getPlant } from './get-plant.ts';

/** Builds the middy handler around its dependencies (the local API and tests bring their own). */
export function createHandler(dependencies: TableHandlerDependencies) {
  const logger = dependencies.logger ?? createLogger({ service: 'get-plant' });
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(apiResponses({ logger }))
    .handler(async (event) => {
      const id = readPlantIdParameter(event);
      const plant = await getPlant(id, { ...dependencies, logger });
      return jsonTextResponse(200, stringifyStoredPlant(plant));
    });
}
