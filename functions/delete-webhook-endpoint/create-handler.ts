/**
 * `DELETE /webhook-endpoints/{endpointId}`: removes one of the token's subject's endpoints.
 * Nothing is delivered to it afterwards: every delivery reads its endpoint as it sends, and a
 * deleted one is not sent to. Its log expires with the 7 days it keeps.
 */
import { endpointErrorCodes } from '../shared/errors/error-codes.ts';
import { ApiError } from '../shared/errors/errors.ts';
import { createRouteHandler } from '../shared/http/route-handler.ts';
import { readEndpointIdParameter } from '../webhook-endpoints/endpoint.ts';
import {
  type EndpointFunctionDependencies,
  endpointRequestOf,
} from '../webhook-endpoints/endpoint-request.ts';
import { deleteEndpoint } from '../webhook-endpoints/endpoint-store.ts';

export function createHandler(dependencies: EndpointFunctionDependencies) {
  return createRouteHandler('delete-webhook-endpoint', dependencies, async (route) => {
    const request = endpointRequestOf(route, dependencies);
    const id = readEndpointIdParameter(request.event.pathParameters);
    if (!(await deleteEndpoint(request.owner, id, request.table))) {
      throw new ApiError(endpointErrorCodes.webhookEndpointNotFound);
    }
    request.logger.info('webhook endpoint deleted', { endpointId: id });
    return { statusCode: 204, headers: {}, body: '' };
  });
}
