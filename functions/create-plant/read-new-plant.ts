/**
 * Turning a REST proxy event into a NewPlant, in the contract's order of checks:
 * content type (40003) → size (40004) → JSON (40001) → schema (40002).
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { maxBodyBytes } from '../shared/error-codes.ts';
import {
  BodyTooLargeError,
  InvalidJsonError,
  UnsupportedMediaTypeError,
} from '../shared/errors.ts';
import { parseJsonWithInt64 } from '../shared/int64-json.ts';
import { findHeader } from '../shared/request.ts';
import { type NewPlant, parseNewPlant } from './new-plant.ts';

// `fatal`: bytes that are not UTF-8 are not JSON, rather than silently replaced characters.
// One decoder for every request: a one-shot `decode` keeps no state between calls.
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The NewPlant of a `POST /plants` request.
 * @throws UnsupportedMediaTypeError | BodyTooLargeError | InvalidJsonError | InvalidPlantError
 */
export function readNewPlant(event: APIGatewayProxyEvent): NewPlant {
  if (!isJsonContentType(findHeader(event, 'content-type'))) throw new UnsupportedMediaTypeError();
  const body = readBodyBytes(event);
  if (body.byteLength > maxBodyBytes) throw new BodyTooLargeError();
  let parsed: unknown;
  try {
    const text = utf8.decode(body);
    parsed = parseJsonWithInt64(text, 'id');
  } catch (error) {
    throw new InvalidJsonError({ cause: error });
  }
  return parseNewPlant(parsed);
}

/** `application/json`, any case, with or without parameters such as `charset`. */
function isJsonContentType(value: string | undefined): boolean {
  const mediaType = value?.split(';', 1)[0]?.trim().toLowerCase();
  return mediaType === 'application/json';
}

/** The body as sent: base64 is decoded first when API Gateway encoded it (binary media types). */
function readBodyBytes(event: APIGatewayProxyEvent): Uint8Array {
  const body = event.body ?? '';
  return event.isBase64Encoded ? Buffer.from(body, 'base64') : Buffer.from(body, 'utf8');
}
