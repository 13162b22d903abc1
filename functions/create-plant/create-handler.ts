/**
 * The `POST /plants` handler (API Gateway REST API, proxy integration, payload v1), the adapter
 * between the HTTP event and {@link createPlant}, built around its dependencies.
 */
import { jsonResponse } from '../shared/http/api-responses.ts';
import { entityTagOf } from '../shared/http/entity-version.ts';
import { createRouteHandler } from '../shared/http/route-handler.ts';
import type { PlantsFunctionDependencies } from '../shared/plants/plants-function.ts';
import { formatTraceparent } from '../shared/platform/trace-context.ts';
import { createPlant } from './create-plant.ts';
import { readNewPlant } from './read-new-plant.ts';

export function createHandler(dependencies: PlantsFunctionDependencies) {
  return createRouteHandler('create-plant', dependencies, async ({ event, logger, trace }) => {
    const store = { ...dependencies, logger, traceparent: formatTraceparent(trace) };
    const newPlant = readNewPlant(event);
    const { plant, version } = await createPlant(newPlant, store);
    return jsonResponse(200, plant, { ETag: entityTagOf(version) });
  });
}
