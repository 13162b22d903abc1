/**
 * `POST /webhook-endpoints`: registers an endpoint (URL checked first; 50 an owner however many
 * race) and answers its secret; the fan-out hears of it before the answer. Under an
 * `Idempotency-Key`, the answer is kept in the endpoint's own transaction: a retry answers it.
 */
import { jsonResponse } from '../shared/http/api-responses.ts';
import { nextVersion } from '../shared/http/entity-version.ts';
import { readJsonBody } from '../shared/http/json-body.ts';
import { requestUrl } from '../shared/http/paging.ts';
import { createRouteHandler } from '../shared/http/route-handler.ts';
import { type EndpointRecord, newEndpointId, viewOf } from '../webhook-endpoints/endpoint.ts';
import { readNewEndpoint } from '../webhook-endpoints/endpoint-body.ts';
import { putNewEndpoint } from '../webhook-endpoints/endpoint-changes.ts';
import {
  type EndpointFunctionDependencies,
  endpointRequestOf,
} from '../webhook-endpoints/endpoint-request.ts';
import { checkedUrlOf, type EndpointUrlPolicy } from '../webhook-endpoints/endpoint-url.ts';
import { answerOnceInWrite } from '../webhook-endpoints/idempotency-keys.ts';
import { newEndpointSecret, type SecretBox } from '../webhook-endpoints/secret-box.ts';

export interface Dependencies extends EndpointFunctionDependencies {
  /** Seals the new endpoint's secret, and opens it again for a retry's kept answer. */
  readonly secretBox: SecretBox;
  /** Which URLs an endpoint may have. */
  readonly urlPolicy: EndpointUrlPolicy;
}

export function createHandler(dependencies: Dependencies) {
  return createRouteHandler('create-webhook-endpoint', dependencies, async (route) => {
    const request = endpointRequestOf(route, dependencies);
    const fields = readNewEndpoint(readJsonBody(request.event));
    return answerOnceInWrite(request, 'create', dependencies.secretBox, async (key) => {
      const url = await checkedUrlOf(fields.url, dependencies.urlPolicy);
      const now = request.now();
      const id = newEndpointId(now);
      const secret = newEndpointSecret();
      const record: EndpointRecord = {
        id,
        owner: request.owner,
        url,
        events: fields.events,
        format: fields.format,
        description: fields.description,
        enabled: true,
        createdAt: new Date(now).toISOString(),
        version: nextVersion(0, now * 1000),
        secret: await dependencies.secretBox.seal(secret, id),
      };
      // No ETag: this answer holds the secret, which no cache may keep.
      const location = { Location: `${requestUrl(request.event)}/${id}` };
      const answer = {
        response: jsonResponse(201, { ...viewOf(record), secret }, location),
        secret: { sealed: record.secret, endpointId: id },
      };
      await putNewEndpoint(record, request.stores, key?.keptIn(answer));
      request.logger.info('webhook endpoint created', { endpointId: id });
      return answer;
    });
  });
}
