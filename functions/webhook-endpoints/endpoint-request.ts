/** What every webhook endpoint function shares: its stores, and its request's owner. */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { endpointErrorCodes } from '../shared/errors/error-codes.ts';
import { ApiError } from '../shared/errors/errors.ts';
import type { RouteHandlerOptions, RouteRequest } from '../shared/http/route-handler.ts';
import type { Logger } from '../shared/platform/logger.ts';
import { type EndpointRecord, readEndpointIdParameter } from './endpoint.ts';
import { type EndpointStores, readEndpoint } from './endpoint-store.ts';

/** What every endpoint function needs: its stores; each adds what its work needs besides. */
export interface EndpointFunctionDependencies extends EndpointStores, RouteHandlerOptions {
  /** The clock (tests move it). @default Date.now */
  readonly now?: () => number;
}

/** What the work of one request gets. */
export interface EndpointRequest {
  readonly event: APIGatewayProxyEvent;
  /** The token's subject: every endpoint the request names must be its. */
  readonly owner: string;
  readonly stores: EndpointStores;
  readonly logger: Logger;
  readonly now: () => number;
}

/** An endpoint function's request: its owner, and the stores. @throws Error without an owner */
export function endpointRequestOf(
  request: RouteRequest,
  dependencies: EndpointFunctionDependencies,
): EndpointRequest {
  const { documentClient, endpointsTableName, logTableName } = dependencies;
  return {
    event: request.event,
    owner: ownerOf(request.event),
    stores: { documentClient, endpointsTableName, logTableName },
    logger: request.logger,
    now: dependencies.now ?? Date.now,
  };
}

/** The token's subject from the authorizer's context; without it, a fault, never an owner. */
function ownerOf(event: APIGatewayProxyEvent): string {
  const sub = (event.requestContext?.authorizer as { sub?: unknown } | null | undefined)?.sub;
  if (typeof sub !== 'string' || sub === '')
    throw new Error('No subject in the authorizer context.');
  return sub;
}

/** The owner's endpoint the path names. @throws ApiError 40005, 40402 */
export async function requireEndpoint(request: EndpointRequest): Promise<EndpointRecord> {
  const id = readEndpointIdParameter(request.event.pathParameters);
  const record = await readEndpoint(request.owner, id, request.stores);
  if (record === undefined) throw new ApiError(endpointErrorCodes.webhookEndpointNotFound);
  return record;
}
