/**
 * The `DELETE /plants/{id}` handler: `204` with no body whether or not the plant existed, or
 * `412` when `If-Match` names none of the plant's version or `If-None-Match` names it.
 */
import { readPreconditions } from '../shared/http/preconditions.ts';
import { createRouteHandler } from '../shared/http/route-handler.ts';
import { readPlantIdParameter } from '../shared/plants/plant-id.ts';
import type { PlantsFunctionDependencies } from '../shared/plants/plants-function.ts';
import { deletePlant } from './delete-plant.ts';

export function createHandler(dependencies: PlantsFunctionDependencies) {
  return createRouteHandler('delete-plant', dependencies, async ({ event, logger }) => {
    const id = readPlantIdParameter(event);
    await deletePlant(id, { ...dependencies, logger }, readPreconditions(event));
    return { statusCode: 204, headers: {}, body: '' };
  });
}
