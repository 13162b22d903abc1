/**
 * `GET /webhook-endpoints/{endpointId}/secret`: the endpoint's current signing secret,
 * `{"secret": "whsec_…"}`. Never logged; the answer is never cached (`Cache-Control: no-store`).
 */
import { jsonResponse } from '../shared/http/api-responses.ts';
import {
  createEndpointHandler,
  type EndpointHandlerDependencies,
  required,
  requireEndpoint,
} from '../webhook-endpoints/endpoint-function.ts';

/** Builds the middy handler around its dependencies (the local API and tests bring their own). */
export function createHandler(dependencies: EndpointHandlerDependencies) {
  const open = required(dependencies.secretBox?.open, 'secret opening');
  return createEndpointHandler('get-webhook-endpoint-secret', dependencies, async (request) => {
    const record = await requireEndpoint(request);
    return jsonResponse(200, { secret: await open(record.secret, record.id) });
  });
}
