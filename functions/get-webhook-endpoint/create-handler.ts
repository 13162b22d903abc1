/**
 * `GET /webhook-endpoints/{endpointId}`: one of the token's subject's endpoints, with its `ETag`
 * (`If-None-Match` answers 304). Another subject's is not found (404), never forbidden.
 */
import { jsonResponse } from '../shared/http/api-responses.ts';
import { entityTagOf } from '../shared/http/entity-version.ts';
import { evaluatePreconditions, readPreconditions } from '../shared/http/preconditions.ts';
import { createRouteHandler } from '../shared/http/route-handler.ts';
import { viewOf } from '../webhook-endpoints/endpoint.ts';
import {
  type EndpointFunctionDependencies,
  endpointRequestOf,
  requireEndpoint,
} from '../webhook-endpoints/endpoint-request.ts';

export function createHandler(dependencies: EndpointFunctionDependencies) {
  return createRouteHandler('get-webhook-endpoint', dependencies, async (route) => {
    const request = endpointRequestOf(route, dependencies);
    const preconditions = readPreconditions(request.event);
    const record = await requireEndpoint(request);
    const etag = { ETag: entityTagOf(record.version) };
    const result = evaluatePreconditions(preconditions, record.version, 'read', 'webhook endpoint');
    if (result === 'not-modified') return { statusCode: 304, headers: etag, body: '' };
    return jsonResponse(200, viewOf(record), etag);
  });
}
