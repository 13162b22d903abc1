/**
 * `POST /webhook-endpoints/{endpointId}/secret/rotate`: a new signing secret. For 24 hours every
 * delivery carries two signatures, the new secret's and the previous one's, so a receiver that
 * changes its secret late still verifies every event; a second rotation within them replaces the
 * previous secret with the one it rotates out.
 */
import { jsonResponse } from '../shared/http/api-responses.ts';
import { createRouteHandler } from '../shared/http/route-handler.ts';
import { rotationOverlapMilliseconds } from '../webhook-endpoints/endpoint.ts';
import {
  type EndpointFunctionDependencies,
  endpointRequestOf,
  requireEndpoint,
} from '../webhook-endpoints/endpoint-request.ts';
import { replaceEndpoint } from '../webhook-endpoints/endpoint-store.ts';
import type { SecretBox } from '../webhook-endpoints/secret-box.ts';
import { newEndpointSecret } from '../webhook-endpoints/secret-box.ts';

/** What the function needs (its Lambda entry, the local API and the tests each give it). */
export interface Dependencies extends EndpointFunctionDependencies {
  /** Seals the new secret. */
  readonly secretBox: Pick<SecretBox, 'seal'>;
}

export function createHandler(dependencies: Dependencies) {
  return createRouteHandler('rotate-webhook-endpoint-secret', dependencies, async (route) => {
    const request = endpointRequestOf(route, dependencies);
    // A change made meanwhile (another rotation, a patch) is read again, then rotated over.
    for (let attempt = 1; ; attempt += 1) {
      const current = await requireEndpoint(request);
      const now = request.now();
      const secret = newEndpointSecret();
      const rotated = {
        ...current,
        secret: await dependencies.secretBox.seal(secret, current.id),
        previousSecret: current.secret,
        previousSecretUntil: now + rotationOverlapMilliseconds,
      };
      // The secret is no part of what the API shows: the ETag stays.
      if (await replaceEndpoint(rotated, { secret: current.secret }, request.table)) {
        request.logger.info('webhook endpoint secret rotated', { endpointId: current.id });
        return jsonResponse(200, { secret });
      }
      if (attempt === 3) throw new Error('The endpoint kept changing during the rotation.');
    }
  });
}
