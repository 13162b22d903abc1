/**
 * `DELETE /webhook-endpoints/{endpointId}`: one of the subject's endpoints, preconditions as for a
 * plant. Nothing is delivered to it afterwards: every delivery reads its endpoint as it sends.
 */
import { endpointErrorCodes } from '../shared/errors/error-codes.ts';
import { ApiError, StoreUnavailableError } from '../shared/errors/errors.ts';
import { evaluatePreconditions, readPreconditions } from '../shared/http/preconditions.ts';
import { createRouteHandler } from '../shared/http/route-handler.ts';
import { deleteEndpoint } from '../webhook-endpoints/endpoint-changes.ts';
import {
  type EndpointFunctionDependencies,
  endpointRequestOf,
  requireEndpoint,
} from '../webhook-endpoints/endpoint-request.ts';

/** Reads and conditioned deletes before the client is told to retry (503). */
const attempts = 3;

export function createHandler(dependencies: EndpointFunctionDependencies) {
  return createRouteHandler('delete-webhook-endpoint', dependencies, async (route) => {
    const request = endpointRequestOf(route, dependencies);
    const preconditions = readPreconditions(request.event);
    for (let attempt = 1; attempt <= attempts; attempt += 1) {
      const record = await requireEndpoint(request);
      evaluatePreconditions(preconditions, record.version, 'write', 'webhook endpoint');
      const outcome = await deleteEndpoint(record, request.stores);
      if (outcome === 'missing') throw new ApiError(endpointErrorCodes.webhookEndpointNotFound);
      if (outcome === 'deleted') {
        request.logger.info('webhook endpoint deleted', { endpointId: record.id });
        return { statusCode: 204, headers: {}, body: '' };
      }
      // Changed since it was read: its preconditions are evaluated again on what it is now.
    }
    throw new StoreUnavailableError();
  });
}
