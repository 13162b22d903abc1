/** `GET /plants`: a page of StoredPlants (exact ids), and `Link: <…>; rel="next"` while more. */
import { jsonTextResponse } from '../shared/http/api-responses.ts';
import { nextLink } from '../shared/http/paging.ts';
import { createRouteHandler } from '../shared/http/route-handler.ts';
import type { PlantsFunctionDependencies } from '../shared/plants/plants-function.ts';
import { itemsNotPlantsLog, stringifyStoredPlants } from '../shared/plants/stored-plant.ts';
import { listPlants } from './list-plants.ts';
import { encodeCursor, readPageParameters } from './page-cursor.ts';

export function createHandler(dependencies: PlantsFunctionDependencies) {
  return createRouteHandler('list-plants', dependencies, async ({ event, logger }) => {
    const request = readPageParameters(event);
    const page = await listPlants(request, dependencies);
    if (page.itemsNotPlants > 0) {
      logger.warn(itemsNotPlantsLog.message, {
        [itemsNotPlantsLog.countField]: page.itemsNotPlants,
      });
    }
    const headers: Record<string, string> =
      page.nextAfter === undefined
        ? {}
        : { Link: nextLink(event, request.limit, encodeCursor(page.nextAfter)) };
    return jsonTextResponse(200, stringifyStoredPlants(page.plants), headers);
  });
}
