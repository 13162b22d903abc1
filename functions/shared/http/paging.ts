/**
 * Paging a list: `limit` (1 to 100, 20 by default) and an opaque `cursor` from the `next` link
 * (RFC 8288); each list writes and reads its own cursors.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { invalidParameter } from '../errors/errors.ts';
import { findHeader } from './request.ts';

export const defaultPageLimit = 20;
export const maxPageLimit = 100;

export interface PageParameters<After> {
  readonly limit: number;
  readonly after?: After;
}

/** `limit` and `cursor` (`decode` answers `undefined` if not the list's). @throws ApiError 40005 */
export function readPage<After>(
  event: APIGatewayProxyEvent,
  decode: (cursor: string) => After | undefined,
): PageParameters<After> {
  const limitText = singleQueryValue(event, 'limit');
  const cursor = singleQueryValue(event, 'cursor');
  let limit = defaultPageLimit;
  if (limitText !== undefined) {
    // Leading zeros are allowed, as in ids: `limit=007` is 7, however many zeros.
    const digits = /^[0-9]+$/.test(limitText) ? limitText.replace(/^0+(?=[0-9])/, '') : '';
    limit = digits.length >= 1 && digits.length <= 3 ? Number(digits) : 0;
    if (limit < 1 || limit > maxPageLimit) {
      throw invalidParameter(`limit must be an integer from 1 to ${maxPageLimit}.`);
    }
  }
  if (cursor === undefined) return { limit };
  const after = decode(cursor);
  if (after === undefined) {
    throw invalidParameter('cursor must be copied unchanged from a next link.');
  }
  return { limit, after };
}

/** The one value of a query parameter, `undefined` when absent. */
function singleQueryValue(event: APIGatewayProxyEvent, name: string): string | undefined {
  const values = event.multiValueQueryStringParameters?.[name] ?? [];
  if (values.length > 1) throw invalidParameter(`${name} must be given at most once.`);
  return values[0] ?? event.queryStringParameters?.[name];
}

/** A cursor that is a key as it stands: base64url of its text. */
export const keyCursorOf = (key: string) => Buffer.from(key, 'latin1').toString('base64url');

/** The key of a {@link keyCursorOf} cursor that `pattern` accepts, in the one spelling written. */
export function keyOfCursor(cursor: string, pattern: RegExp): string | undefined {
  const key = Buffer.from(cursor, 'base64url').toString('latin1');
  return pattern.test(key) && keyCursorOf(key) === cursor ? key : undefined;
}

/** The next page's `Link` (RFC 8288): absolute, on the host and path the client called. */
export function nextLink(event: APIGatewayProxyEvent, limit: number, cursor: string): string {
  return `<${requestUrl(event)}?limit=${limit}&cursor=${cursor}>; rel="next"`;
}

/** The URL the client called, without its query: its origin and path as it wrote them. */
export function requestUrl(event: APIGatewayProxyEvent): string {
  const { domainName, path } = event.requestContext ?? {};
  const requestPath = path || event.path;
  // API Gateway sets X-Forwarded-Proto (always https); the local stand-in sets http.
  const scheme = findHeader(event, 'x-forwarded-proto') === 'http' ? 'http' : 'https';
  const origin = domainName ? `${scheme}://${domainName}` : '';
  return `${origin}${requestPath}`;
}
