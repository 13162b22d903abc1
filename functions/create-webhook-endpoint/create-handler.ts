/**
 * `POST /webhook-endpoints`: registers an endpoint for the token's subject and answers it with
 * its signing secret (shown here and by `GET …/secret`, never in an Endpoint). The URL is checked
 * (`endpoint-url.ts`) before anything is stored.
 */

import { endpointErrorCodes } from '../shared/errors/error-codes.ts';
import { ApiError } from '../shared/errors/errors.ts';
import { jsonResponse } from '../shared/http/api-responses.ts';
import { nextVersion } from '../shared/http/entity-version.ts';
import { readJsonBody } from '../shared/http/json-body.ts';
import { requestUrl } from '../shared/http/paging.ts';
import {
  checkedUrlOf,
  type EndpointRecord,
  maxEndpointsPerOwner,
  newEndpointId,
  readNewEndpoint,
  viewOf,
} from '../webhook-endpoints/endpoint.ts';
import {
  createEndpointHandler,
  type EndpointHandlerDependencies,
  required,
} from '../webhook-endpoints/endpoint-function.ts';
import { countEndpoints, putNewEndpoint } from '../webhook-endpoints/endpoint-store.ts';
import { newEndpointSecret } from '../webhook-endpoints/secret-box.ts';

/** Builds the middy handler around its dependencies (the local API and tests bring their own). */
export function createHandler(dependencies: EndpointHandlerDependencies) {
  const seal = required(dependencies.secretBox?.seal, 'secret sealing');
  return createEndpointHandler('create-webhook-endpoint', dependencies, async (request) => {
    const fields = readNewEndpoint(readJsonBody(request.event));
    const url = await checkedUrlOf(fields.url, request.urlPolicy);
    if ((await countEndpoints(request.owner, request.table)) >= maxEndpointsPerOwner) {
      throw new ApiError(
        endpointErrorCodes.endpointLimitReached,
        `This client has ${maxEndpointsPerOwner} webhook endpoints, the most it may have; delete one first.`,
      );
    }
    const now = request.now();
    const id = newEndpointId(now);
    const secret = newEndpointSecret();
    const record: EndpointRecord = {
      id,
      owner: request.owner,
      url,
      events: fields.events,
      format: fields.format,
      ...(fields.description === undefined ? {} : { description: fields.description }),
      enabled: true,
      createdAt: new Date(now).toISOString(),
      version: nextVersion(0, now * 1000),
      secret: await seal(secret, id),
    };
    await putNewEndpoint(record, request.table);
    request.logger.info('webhook endpoint created', { endpointId: id });
    // No ETag: this answer holds the secret, which no cache may keep.
    return jsonResponse(
      201,
      { ...viewOf(record), secret },
      { Location: `${requestUrl(request.event)}/${id}` },
    );
  });
}
