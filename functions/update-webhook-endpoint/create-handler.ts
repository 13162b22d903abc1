/**
 * `PATCH /webhook-endpoints/{endpointId}` (merge patch): its own members only, under a required
 * `If-Match`. Re-enabling clears the failures but sends nothing missed: `recover` does that.
 */
import { preconditionFailed, preconditionRequired } from '../shared/errors/errors.ts';
import { jsonResponse } from '../shared/http/api-responses.ts';
import { entityTagOf, nextVersion } from '../shared/http/entity-version.ts';
import { readJsonBody } from '../shared/http/json-body.ts';
import { evaluatePreconditions, readPreconditions } from '../shared/http/preconditions.ts';
import { createRouteHandler } from '../shared/http/route-handler.ts';
import { type EndpointRecord, viewOf } from '../webhook-endpoints/endpoint.ts';
import { type EndpointPatch, readEndpointPatch } from '../webhook-endpoints/endpoint-body.ts';
import { changeEndpoint } from '../webhook-endpoints/endpoint-changes.ts';
import {
  type EndpointFunctionDependencies,
  endpointRequestOf,
  requireEndpoint,
} from '../webhook-endpoints/endpoint-request.ts';
import { checkedUrlOf, type EndpointUrlPolicy } from '../webhook-endpoints/endpoint-url.ts';

/** The reason an endpoint its owner disabled shows. */
export const disabledByOwner = 'Disabled by its owner.';

export interface Dependencies extends EndpointFunctionDependencies {
  /** Which URLs an endpoint may have. */
  readonly urlPolicy: EndpointUrlPolicy;
}

export function createHandler(dependencies: Dependencies) {
  return createRouteHandler('update-webhook-endpoint', dependencies, async (route) => {
    const request = endpointRequestOf(route, dependencies);
    const preconditions = readPreconditions(request.event);
    if (preconditions.ifMatch === undefined) throw preconditionRequired('webhook endpoint');
    const body = readJsonBody(request.event, 'application/merge-patch+json');
    // With `If-Match: *`, a change made meanwhile is read again and the patch applied over it.
    for (let attempt = 1; ; attempt += 1) {
      const current = await requireEndpoint(request);
      evaluatePreconditions(preconditions, current.version, 'write', 'webhook endpoint');
      const patch = readEndpointPatch(body, current);
      const url =
        patch.url === undefined
          ? current.url
          : await checkedUrlOf(patch.url, dependencies.urlPolicy);
      const next = patched(current, { ...patch, url }, request.now());
      if (next === undefined) {
        return jsonResponse(200, viewOf(current), { ETag: entityTagOf(current.version) });
      }
      const changed = await changeEndpoint(current, next, request.stores);
      if (changed !== undefined) {
        request.logger.info('webhook endpoint changed', { endpointId: current.id });
        return jsonResponse(200, viewOf(changed), { ETag: entityTagOf(changed.version) });
      }
      if (preconditions.ifMatch !== 'any' || attempt === 3) {
        throw preconditionFailed('If-Match', 'webhook endpoint');
      }
    }
  });
}

/** The endpoint with the patch applied, or `undefined` when it would not change. */
function patched(
  current: EndpointRecord,
  patch: EndpointPatch & { readonly url: string },
  now: number,
): EndpointRecord | undefined {
  const enabled = patch.enabled ?? current.enabled;
  const description =
    patch.description === undefined ? current.description : (patch.description ?? undefined);
  const { description: _, disabledReason: _reason, failingSince: _since, ...rest } = current;
  const next: EndpointRecord = {
    ...rest,
    url: patch.url,
    events: patch.events ?? current.events,
    format: patch.format ?? current.format,
    description,
    enabled,
    // Disabled by its owner, or still disabled as it was; enabled again, with a clean slate.
    ...(enabled
      ? current.enabled && current.failingSince !== undefined
        ? { failingSince: current.failingSince }
        : {}
      : {
          disabledReason: current.enabled
            ? disabledByOwner
            : (current.disabledReason ?? disabledByOwner),
        }),
  };
  const same = JSON.stringify(viewOf(next)) === JSON.stringify(viewOf(current));
  return same ? undefined : { ...next, version: nextVersion(current.version, now * 1000) };
}
