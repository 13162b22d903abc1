/**
 * A plant's id as a path names it (`/plants/{id}`).
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { InvalidParameterError } from '../errors/errors.ts';
import { int64Max, int64Min, parseDecimalInt64 } from '../http/int64-json.ts';

/**
 * The plant id of a `/plants/{id}` path: decimal digits with an optional leading minus, within
 * int64. API Gateway passes path parameters as sent, not percent-decoded: `%31` is not an id.
 * @throws InvalidParameterError (40005) naming `id`.
 */
export function readPlantIdParameter(event: APIGatewayProxyEvent): bigint {
  const text = event.pathParameters?.id;
  const id = text === undefined ? undefined : parseDecimalInt64(text);
  if (id === undefined) {
    throw new InvalidParameterError(
      `Invalid parameter: id must be an integer from ${int64Min} to ${int64Max}.`,
    );
  }
  return id;
}
