/**
 * `PUT` and `PATCH /plants/{id}`: checks the id (40005), the body (40003, 40004, 40001, 40002),
 * `If-Match` (42800), then the store (40401, 41200); answers the plant with its new `ETag`.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { preconditionRequired } from '../shared/errors/errors.ts';
import { jsonTextResponse } from '../shared/http/api-responses.ts';
import { entityTagOf } from '../shared/http/entity-version.ts';
import { readJsonBody } from '../shared/http/json-body.ts';
import { readPreconditions } from '../shared/http/preconditions.ts';
import { createRouteHandler } from '../shared/http/route-handler.ts';
import { readPlantIdParameter } from '../shared/plants/plant-id.ts';
import type { PlantsFunctionDependencies } from '../shared/plants/plants-function.ts';
import { stringifyStoredPlant } from '../shared/plants/stored-plant.ts';
import { formatTraceparent } from '../shared/platform/trace-context.ts';
import { type PlantChange, parsePatch, parseReplacement } from './plant-change.ts';
import { updatePlant } from './update-plant.ts';

export function createHandler(dependencies: PlantsFunctionDependencies) {
  return createRouteHandler('update-plant', dependencies, async ({ event, logger, trace }) => {
    const store = { ...dependencies, logger, traceparent: formatTraceparent(trace) };
    const id = readPlantIdParameter(event);
    const change = readChange(event, id);
    const preconditions = readPreconditions(event);
    const { ifMatch } = preconditions;
    // A change must say which version it changes.
    if (ifMatch === undefined) throw preconditionRequired();
    const { plant, version } = await updatePlant(id, change, { ...preconditions, ifMatch }, store);
    return jsonTextResponse(200, stringifyStoredPlant(plant), { ETag: entityTagOf(version) });
  });
}

/** `PATCH` takes a JSON merge patch; `PUT` (the only other method routed here) a Plant. */
function readChange(event: APIGatewayProxyEvent, id: bigint): PlantChange {
  return event.httpMethod === 'PATCH'
    ? parsePatch(readJsonBody(event, 'application/merge-patch+json'), id)
    : parseReplacement(readJsonBody(event), id);
}
