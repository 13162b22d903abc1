/**
 * How often an owner may `test` and `recover` an endpoint: fixed windows in the webhook log, each
 * call a conditional increment, so concurrent calls cannot pass the limit together.
 */
import { errorCodes } from '../shared/errors/error-codes.ts';
import { ApiError } from '../shared/errors/errors.ts';
import { conditionFailed, updateIf } from '../shared/platform/dynamodb.ts';
import type { WebhookLogTable } from './webhook-log.ts';

/** The limits per endpoint: at most `calls` in each window of `windowSeconds`. */
export const endpointCallLimits = {
  /** `POST …/test`: ten a minute. */
  test: { calls: 10, windowSeconds: 60 },
  /** `POST …/recover`: five a minute (each queues at most {@link recoverCap} events). */
  recover: { calls: 5, windowSeconds: 60 },
} as const satisfies Record<string, { readonly calls: number; readonly windowSeconds: number }>;

/** The most events one `recover` queues; the answer says when more were missed. */
export const recoverCap = 1000;

/** Counts a call at the endpoint. @throws ApiError 42900 with `Retry-After` past the limit */
export async function countEndpointCall(
  endpointId: string,
  call: keyof typeof endpointCallLimits,
  now: number,
  log: WebhookLogTable,
): Promise<void> {
  const limit = endpointCallLimits[call];
  const windowMilliseconds = limit.windowSeconds * 1000;
  const windowStart = Math.floor(now / windowMilliseconds) * windowMilliseconds;
  const counted = await updateIf(log, {
    TableName: log.logTableName,
    Key: { pk: `limits#${endpointId}`, sk: `${call}#${windowStart}` },
    UpdateExpression: 'ADD calls :one SET expiresAt = :expires',
    ConditionExpression: 'attribute_not_exists(calls) OR calls < :most',
    ExpressionAttributeValues: {
      ':one': 1,
      ':most': limit.calls,
      ':expires': Math.ceil((windowStart + 2 * windowMilliseconds) / 1000),
    },
  });
  if (conditionFailed(counted)) {
    throw new ApiError(
      errorCodes.throttled,
      `This endpoint's ${call} may be called ${limit.calls} times a ${limit.windowSeconds === 60 ? 'minute' : `${limit.windowSeconds} s`}; retry later.`,
      { retryAfterSeconds: (windowStart + windowMilliseconds - now) / 1000 },
    );
  }
}
