/**
 * `GET /webhook-endpoints?limit=&cursor=`: the token's subject's endpoints in creation order, a
 * page at a time, with a `Link: <…>; rel="next"` while more follow (as the plants' list).
 */
import { jsonResponse } from '../shared/http/api-responses.ts';
import { keyCursorOf, keyOfCursor, nextLink, readPage } from '../shared/http/paging.ts';
import { createRouteHandler } from '../shared/http/route-handler.ts';
import { endpointIdPattern, viewOf } from '../webhook-endpoints/endpoint.ts';
import {
  type EndpointFunctionDependencies,
  endpointRequestOf,
} from '../webhook-endpoints/endpoint-request.ts';
import { listEndpoints } from '../webhook-endpoints/endpoint-store.ts';

export function createHandler(dependencies: EndpointFunctionDependencies) {
  return createRouteHandler('list-webhook-endpoints', dependencies, async (route) => {
    const request = endpointRequestOf(route, dependencies);
    const page = readPage(request.event, (cursor) => keyOfCursor(cursor, endpointIdPattern));
    const { records, more } = await listEndpoints(request.owner, page, request.stores);
    const last = records.at(-1);
    const headers: Record<string, string> =
      more && last !== undefined
        ? { Link: nextLink(request.event, page.limit, keyCursorOf(last.id)) }
        : {};
    return jsonResponse(200, records.map(viewOf), headers);
  });
}
