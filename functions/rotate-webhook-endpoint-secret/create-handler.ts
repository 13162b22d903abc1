/**
 * `POST …/secret/rotate` `{"overlapSeconds"?}`: a new secret, the previous one signing too for the
 * overlap (24 h by default; 0 revokes it at once). Only the secrets are written: the ETag stays.
 */
import * as v from 'valibot';
import { endpointErrorCodes } from '../shared/errors/error-codes.ts';
import { ApiError } from '../shared/errors/errors.ts';
import { jsonResponse } from '../shared/http/api-responses.ts';
import { readJsonBody } from '../shared/http/json-body.ts';
import { createRouteHandler } from '../shared/http/route-handler.ts';
import { rotationOverlapMilliseconds } from '../webhook-endpoints/endpoint.ts';
import { rotateEndpointSecret } from '../webhook-endpoints/endpoint-changes.ts';
import {
  type EndpointFunctionDependencies,
  endpointRequestOf,
  requireEndpoint,
} from '../webhook-endpoints/endpoint-request.ts';
import { answerOnce } from '../webhook-endpoints/idempotency-keys.ts';
import { newEndpointSecret, type SecretBox } from '../webhook-endpoints/secret-box.ts';

export interface Dependencies extends EndpointFunctionDependencies {
  /** Seals the new secret, and opens it again for a retry's kept answer (`Idempotency-Key`). */
  readonly secretBox: SecretBox;
}

const longestOverlapSeconds = rotationOverlapMilliseconds / 1000;

/** The rotation's body: how long the previous secret still signs. */
export const rotationSchema = v.strictObject({
  overlapSeconds: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(longestOverlapSeconds)),
  ),
});

export function createHandler(dependencies: Dependencies) {
  return createRouteHandler('rotate-webhook-endpoint-secret', dependencies, async (route) => {
    const request = endpointRequestOf(route, dependencies);
    const overlapSeconds = readOverlapSeconds(request.event);
    return answerOnce(request, 'rotate', dependencies.secretBox, async () => {
      const current = await requireEndpoint(request);
      const secret = newEndpointSecret();
      const sealed = await dependencies.secretBox.seal(secret, current.id);
      const until = overlapSeconds === 0 ? undefined : request.now() + overlapSeconds * 1000;
      const rotated = { secret: sealed, previousSecretUntil: until };
      if (!(await rotateEndpointSecret(current, rotated, request.stores))) {
        // Deleted meanwhile: answered as a missing endpoint is.
        await requireEndpoint(request);
        throw new Error('The endpoint was not rotated, yet it exists.');
      }
      request.logger.info('webhook endpoint secret rotated', {
        endpointId: current.id,
        overlapSeconds,
      });
      return {
        response: jsonResponse(200, { secret }),
        secret: { sealed: rotated.secret, endpointId: current.id },
      };
    });
  });
}

/** The body's `overlapSeconds`; no body is the default. @throws ApiError 40020 */
function readOverlapSeconds(event: Parameters<typeof readJsonBody>[0]): number {
  if ((event.body ?? '') === '') return longestOverlapSeconds;
  const body = readJsonBody(event);
  const parsed = v.safeParse(rotationSchema, body);
  if (!parsed.success || Array.isArray(body)) {
    throw new ApiError(
      endpointErrorCodes.invalidWebhookEndpoint,
      `The body must be an object whose only member, overlapSeconds, is a whole number of seconds from 0 to ${longestOverlapSeconds}.`,
    );
  }
  return parsed.output.overlapSeconds ?? longestOverlapSeconds;
}
