/**
 * `GET /webhook-endpoints/{endpointId}/secret`: the endpoint's current signing secret,
 * `{"secret": "whsec_…"}`. Never logged; the answer is never cached (`Cache-Control: no-store`).
 */
import { jsonResponse } from '../shared/http/api-responses.ts';
import { createRouteHandler } from '../shared/http/route-handler.ts';
import {
  type EndpointFunctionDependencies,
  endpointRequestOf,
  requireEndpoint,
} from '../webhook-endpoints/endpoint-request.ts';
import type { SecretBox } from '../webhook-endpoints/secret-box.ts';

export interface Dependencies extends EndpointFunctionDependencies {
  /** Opens the endpoint's secret. */
  readonly secretBox: Pick<SecretBox, 'open'>;
}

export function createHandler(dependencies: Dependencies) {
  return createRouteHandler('get-webhook-endpoint-secret', dependencies, async (route) => {
    const request = endpointRequestOf(route, dependencies);
    const record = await requireEndpoint(request);
    const secret = await dependencies.secretBox.open(record.secret, record.id);
    return jsonResponse(200, { secret });
  });
}
