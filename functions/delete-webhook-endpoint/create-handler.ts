/**
 * `DELETE /webhook-endpoints/{endpointId}`: removes one of the token's subject's endpoints.
 * Nothing is delivered to it afterwards: every delivery reads its endpoint as it sends, and a
 * deleted one is not sent to. Its log expires with the 7 days it keeps.
 */
import { endpointErrorCodes } from '../shared/errors/error-codes.ts';
import { ApiError } from '../shared/errors/errors.ts';
import { readEndpointIdParameter } from '../webhook-endpoints/endpoint.ts';
import {
  createEndpointHandler,
  type EndpointHandlerDependencies,
} from '../webhook-endpoints/endpoint-function.ts';
import { deleteEndpoint } from '../webhook-endpoints/endpoint-store.ts';

/** Builds the middy handler around its dependencies (the local API and tests bring their own). */
export function createHandler(dependencies: EndpointHandlerDependencies) {
  return createEndpointHandler('delete-webhook-endpoint', dependencies, async (request) => {
    const id = readEndpointIdParameter(request.event.pathParameters);
    if (!(await deleteEndpoint(request.owner, id, request.table))) {
      throw new ApiError(endpointErrorCodes.webhookEndpointNotFound);
    }
    request.logger.info('webhook endpoint deleted', { endpointId: id });
    return { statusCode: 204, headers: {}, body: '' };
  });
}
