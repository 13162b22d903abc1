/** A JSON request body in the contract's order: content type (40003), size (40004), JSON (40001). */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { errorCodes, maxBodyBytes } from '../errors/error-codes.ts';
import { ApiError } from '../errors/errors.ts';
import { parseJsonWithInt64 } from './int64-json.ts';
import { findHeader } from './request.ts';

// `fatal`: bytes that are not UTF-8 are not JSON; one decoder serves every request.
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The body parsed as `mediaType`, `id` an exact int64. @throws ApiError 40003, 40004 or 40001 */
export function readJsonBody(
  event: APIGatewayProxyEvent,
  mediaType: 'application/json' | 'application/merge-patch+json' = 'application/json',
): unknown {
  const given = findHeader(event, 'content-type')?.split(';', 1)[0]?.trim().toLowerCase();
  if (given !== mediaType) {
    const { unsupportedMediaType } = errorCodes;
    throw new ApiError(
      unsupportedMediaType,
      unsupportedMediaType.message.replace('application/json', mediaType),
    );
  }
  // Base64 is decoded first when API Gateway encoded the body (binary media types).
  const body = Buffer.from(event.body ?? '', event.isBase64Encoded ? 'base64' : 'utf8');
  if (body.byteLength > maxBodyBytes) throw new ApiError(errorCodes.bodyTooLarge);
  try {
    return parseJsonWithInt64(utf8.decode(body), 'id');
  } catch (error) {
    throw new ApiError(errorCodes.invalidJson, undefined, { cause: error });
  }
}
