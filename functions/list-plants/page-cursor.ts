/**
 * `GET /plants`'s `cursor` (base64url of the id the next page starts after: a tampered one starts
 * a walk somewhere or is 400/40005) and `limit`, and the next page's `Link`.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { parseDecimalInt64 } from '../shared/http/int64-json.ts';
import { nextLink, type PageParameters, readPage } from '../shared/http/paging.ts';

export { defaultPageLimit, maxPageLimit } from '../shared/http/paging.ts';

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

/** `limit` and `cursor` of `GET /plants`. @throws ApiError 40005 naming the parameter */
export function readPageParameters(event: APIGatewayProxyEvent): PageParameters<bigint> {
  return readPage(event, decodeCursor);
}

/** The `Link` header value of the page after the plant `after`. */
export function formatNextLink(event: APIGatewayProxyEvent, limit: number, after: bigint): string {
  return nextLink(event, limit, encodeCursor(after));
}
