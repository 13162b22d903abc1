/**
 * The `DELETE /plants/{id}` handler: `204` with no body whether or not the plant existed, or
 * `412` when `If-Match` names none of the plant's version or `If-None-Match` names it.
 * Free of module-scope effects; `handler.ts` is the Lambda entry.
 */
import { readPreconditions } from '../shared/http/preconditions.ts';
import { readPlantIdParameter } from '../shared/plants/plant-id.ts';
import {
  createTableHandler,
  type TableHandlerDependencies,
} from '../shared/plants/plants-function.ts';
import { deletePlant } from './delete-plant.ts';

/** Builds the middy handler around its dependencies (the local API and tests bring their own). */
export function createHandler(dependencies: TableHandlerDependencies) {
  return createTableHandler('delete-plant', dependencies, async (event, store) => {
    const id = readPlantIdParameter(event);
    await deletePlant(id, store, readPreconditions(event));
    return { statusCode: 204, headers: {}, body: '' };
  });
}
