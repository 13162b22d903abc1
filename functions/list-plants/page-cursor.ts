/**
 * `GET /plants`'s `cursor` (base64url of where the next page starts: the walk's segments, the one
 * it began in and the one it is in, and the id it stopped after; a walk in one segment, the
 * id alone. A tampered one starts a walk somewhere or is 400/40005) and `limit`.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { parseDecimalInt64 } from '../shared/http/int64-json.ts';
import { type PageParameters, readPage } from '../shared/http/paging.ts';
import type { WalkPosition } from './list-plants.ts';

type CursorPosition = WalkPosition & { readonly after: bigint };

/** The cursor of the page that starts at `position`. */
export function encodeCursor(position: CursorPosition): string {
  const { segments, first, segment, after } = position;
  const text = segments === 1 ? String(after) : `${segments}.${first}.${segment}.${after}`;
  return Buffer.from(text, 'latin1').toString('base64url');
}

// The longest cursor: base64url of `1000.999.999.-9223372036854775808` (33 characters) is 44.
const cursorPattern = /^[A-Za-z0-9_-]{1,44}$/;

/** Where a cursor starts, or `undefined` when it is not a cursor this API could issue. */
export function decodeCursor(cursor: string): CursorPosition | undefined {
  if (!cursorPattern.test(cursor)) return undefined;
  const parts = Buffer.from(cursor, 'base64url').toString('latin1').split('.');
  if (parts.length !== 1 && parts.length !== 4) return undefined;
  const [segments = 1, first = 0, segment = 0] = parts.length === 4 ? parts.map(Number) : [];
  const after = parseDecimalInt64(parts.at(-1) ?? '');
  const valid = (value: number, below: number) =>
    Number.isSafeInteger(value) && value >= 0 && value < below;
  if (after === undefined || !valid(segments, 1001) || !valid(first, segments)) return undefined;
  if (!valid(segment, segments)) return undefined;
  const position = { segments, first, segment, after };
  // Only the one spelling this API writes: no padding bits, no leading zeros.
  return encodeCursor(position) === cursor ? position : undefined;
}

/** `limit` and `cursor` of `GET /plants`. @throws ApiError 40005 naming the parameter */
export function readPageParameters(event: APIGatewayProxyEvent): PageParameters<CursorPosition> {
  return readPage(event, decodeCursor);
}
