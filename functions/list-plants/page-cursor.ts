/**
 * The `cursor` and `limit` query parameters of `GET /plants`, and the `Link` to the next page.
 *
 * A cursor is opaque to clients: base64url of the id after which the next page starts. Any
 * cursor that decodes to an int64 is a valid start point (DynamoDB resumes a Scan at a key's
 * position whether or not the key exists), so a tampered or foreign cursor either starts a walk
 * somewhere or is answered 400/40005; it can never reach the store malformed.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { InvalidParameterError } from '../shared/errors.ts';
import { parseDecimalInt64 } from '../shared/int64-json.ts';
import { findHeader } from '../shared/request.ts';

export const defaultPageLimit = 20;
export const maxPageLimit = 100;

/** The cursor of the page that starts after `id`. */
export function encodeCursor(id: bigint): string {
  return Buffer.from(id.toString(), 'latin1').toString('base64url');
}

// The longest cursor: base64url of `-9223372036854775808` (20 characters) is 27 characters.
const cursorPattern = /^[A-Za-z0-9_-]{1,27}$/;

/** The id a cursor starts after, or `undefined` when it is not a cursor this API could issue. */
export function decodeCursor(cursor: string): bigint | undefined {
  if (!cursorPattern.test(cursor)) return undefined;
  const id = parseDecimalInt64(Buffer.from(cursor, 'base64url').toString('latin1'));
  // Only the one spelling this API writes: no padding bits, no leading zeros.
  return id !== undefined && encodeCursor(id) === cursor ? id : undefined;
}

export interface PageParameters {
  readonly limit: number;
  readonly after?: bigint;
}

/**
 * `limit` (an integer from 1 to 100, 20 when absent) and `cursor` (from a `next` link) of the
 * request. Each may be given once; other query parameters are ignored.
 * @throws InvalidParameterError (40005) naming the parameter.
 */
export function readPageParameters(event: APIGatewayProxyEvent): PageParameters {
  const limitText = singleQueryValue(event, 'limit');
  const cursor = singleQueryValue(event, 'cursor');
  let limit = defaultPageLimit;
  if (limitText !== undefined) {
    // Leading zeros are allowed, as in ids: `limit=007` is 7, however many zeros.
    const digits = /^[0-9]+$/.test(limitText) ? limitText.replace(/^0+(?=[0-9])/, '') : '';
    limit = digits.length >= 1 && digits.length <= 3 ? Number(digits) : 0;
    if (limit < 1 || limit > maxPageLimit) {
      throw new InvalidParameterError(
        `Invalid parameter: limit must be an integer from 1 to ${maxPageLimit}.`,
      );
    }
  }
  if (cursor === undefined) return { limit };
  const after = decodeCursor(cursor);
  if (after === undefined) {
    throw new InvalidParameterError(
      'Invalid parameter: cursor must be copied unchanged from a next link.',
    );
  }
  return { limit, after };
}

/** The one value of a query parameter, `undefined` when absent. */
function singleQueryValue(event: APIGatewayProxyEvent, name: string): string | undefined {
  const values = event.multiValueQueryStringParameters?.[name] ?? [];
  if (values.length > 1) {
    throw new InvalidParameterError(`Invalid parameter: ${name} must be given at most once.`);
  }
  return values[0] ?? event.queryStringParameters?.[name];
}

/**
 * The `Link` header value of the next page (RFC 8288): an absolute URL on the host and path the
 * client called, stage or custom domain's base path included (`requestContext.path`), so it can
 * be followed as it is. Relative to the host when the event names no domain.
 */
export function formatNextLink(event: APIGatewayProxyEvent, limit: number, after: bigint): string {
  const { domainName, path } = event.requestContext ?? {};
  const requestPath = path || event.path;
  // API Gateway sets X-Forwarded-Proto (always https); the local stand-in sets http.
  const scheme = findHeader(event, 'x-forwarded-proto') === 'http' ? 'http' : 'https';
  const origin = domainName ? `${scheme}://${domainName}` : '';
  return `<${origin}${requestPath}?limit=${limit}&cursor=${encodeCursor(after)}>; rel="next"`;
}
