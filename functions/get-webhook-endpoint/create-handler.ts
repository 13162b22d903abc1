/**
 * `GET /webhook-endpoints/{endpointId}`: one of the token's subject's endpoints, with its `ETag`
 * (`If-None-Match` answers 304). Another subject's is not found (404), never forbidden.
 */
import { jsonResponse } from '../shared/http/api-responses.ts';
import { entityTagOf } from '../shared/http/entity-version.ts';
import { evaluatePreconditions, readPreconditions } from '../shared/http/preconditions.ts';
import { viewOf } from '../webhook-endpoints/endpoint.ts';
import {
  createEndpointHandler,
  type EndpointHandlerDependencies,
  requireEndpoint,
} from '../webhook-endpoints/endpoint-function.ts';

/** Builds the middy handler around its dependencies (the local API and tests bring their own). */
export function createHandler(dependencies: EndpointHandlerDependencies) {
  return createEndpointHandler('get-webhook-endpoint', dependencies, async (request) => {
    const preconditions = readPreconditions(request.event);
    const record = await requireEndpoint(request);
    const etag = { ETag: entityTagOf(record.version) };
    if (
      evaluatePreconditions(preconditions, record.version, 'read', 'webhook endpoint') ===
      'not-modified'
    ) {
      return { statusCode: 304, headers: etag, body: '' };
    }
    return jsonResponse(200, viewOf(record), etag);
  });
}
