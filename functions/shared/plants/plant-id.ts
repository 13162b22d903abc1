/** A plant's id as a path names it (`/plants/{id}`). */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { invalidParameter } from '../errors/errors.ts';
import { int64Max, int64Min, parseDecimalInt64 } from '../http/int64-json.ts';

/** A path's id as `openapi.yaml` says it: 20 digits at most (leading zeros too), an optional minus. */
const idPattern = /^-?[0-9]{1,20}$/;

/**
 * The plant id of a `/plants/{id}` path, within int64. API Gateway passes path parameters as sent,
 * not percent-decoded: `%31` is not an id. @throws ApiError 40005 naming `id`.
 */
export function readPlantIdParameter(event: APIGatewayProxyEvent): bigint {
  const text = event.pathParameters?.id;
  const id = text === undefined || !idPattern.test(text) ? undefined : parseDecimalInt64(text);
  if (id === undefined) {
    throw invalidParameter(`id must be an integer from ${int64Min} to ${int64Max}.`);
  }
  return id;
}
