/**
 * The `POST /plants` handler (API Gateway REST API, proxy integration, payload v1), the adapter
 * between the HTTP event and {@link createPlant}, built around its dependencies. Free of
 * module-scope effects so that the local API and tests can import it without a Lambda
 * environment; `handler.ts` is the Lambda entry.
 */

import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { apiResponses, jsonResponse } from '../shared/api-responses.ts';
import { createLogger, type Logger } from '../shared/logger.ts';
import { createPlant } from './create-plant.ts';
import { readNewPlant } from './read-new-plant.ts';

export interface CreatePlantHandlerDependencies {
  readonly documentClient: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly logger?: Logger;
  /** Overall time for the store call, retries included (tests shorten it). */
  readonly storeDeadlineMilliseconds?: number;
}

/** Builds the middy handler around its dependencies (the local API and tests bring their own). */
export function createHandler(dependencies: CreatePlantHandlerDependencies) {
  const { documentClient, tableName } = dependencies;
  const logger = dependencies.logger ?? createLogger({ service: 'create-plant' });
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(apiResponses({ logger }))
    .handler(async (event) => {
      const newPlant = readNewPlant(event);
      const plant = await createPlant(newPlant, {
        documentClient,
        tableName,
        ...(dependencies.storeDeadlineMilliseconds === undefined
          ? {}
          : { deadlineMilliseconds: dependencies.storeDeadlineMilliseconds }),
      });
      return jsonResponse(200, plant);
    });
}

/** The configuration from the environment; a missing `TABLE_NAME` fails the cold start. */
export function readCreatePlantConfig(environment: NodeJS.ProcessEnv = process.env) {
  const tableName = environment.TABLE_NAME;
  if (tableName === undefined || tableName === '') {
    throw new Error(
      'create-plant: the environment variable TABLE_NAME (the plants table) is required',
    );
  }
  const endpoint = environment.DYNAMODB_ENDPOINT || undefined;
  return { tableName, endpoint };
}
