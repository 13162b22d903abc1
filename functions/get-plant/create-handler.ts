/**
 * `GET /plants/{id}`: the plant as a StoredPlant (exact id) with its `ETag`, `412` when
 * `If-Match` names another version, or `304 Not Modified` when `If-None-Match` names it.
 */
import { jsonTextResponse } from '../shared/http/api-responses.ts';
import { entityTagOf } from '../shared/http/entity-version.ts';
import { evaluatePreconditions, readPreconditions } from '../shared/http/preconditions.ts';
import { createRouteHandler } from '../shared/http/route-handler.ts';
import { readPlantIdParameter } from '../shared/plants/plant-id.ts';
import type { PlantsFunctionDependencies } from '../shared/plants/plants-function.ts';
import { readPlant } from '../shared/plants/read-plant.ts';
import { stringifyStoredPlant } from '../shared/plants/stored-plant.ts';

export function createHandler(dependencies: PlantsFunctionDependencies) {
  return createRouteHandler('get-plant', dependencies, async ({ event, logger }) => {
    const id = readPlantIdParameter(event);
    const { plant, version } = await readPlant(id, { ...dependencies, logger });
    const etag = entityTagOf(version);
    if (evaluatePreconditions(readPreconditions(event), version, 'read') === 'not-modified') {
      // RFC 9110 §15.4.5: no body, and the ETag a 200 would have carried.
      return { statusCode: 304, headers: { ETag: etag }, body: '' };
    }
    return jsonTextResponse(200, stringifyStoredPlant(plant), { ETag: etag });
  });
}
