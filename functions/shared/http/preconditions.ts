/** A plant request's conditional headers (RFC 9110 §13), evaluated in §13.2.2's order. */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { preconditionFailed } from '../errors/errors.ts';
import {
  type EntityTagList,
  matchesWeakly,
  parseEntityTagList,
  versionsMatchedBy,
} from './entity-version.ts';
import { findListHeader } from './request.ts';

export interface Preconditions {
  /** `If-Match`: the versions it names (strong comparison), or `'any'` for `*`; absent if not sent. */
  readonly ifMatch?: readonly number[] | 'any';
  /** `If-None-Match` (weak comparison), when sent. */
  readonly ifNoneMatch?: EntityTagList;
}

/** The request's `If-Match` and `If-None-Match`, each on one line or several. */
export function readPreconditions(event: APIGatewayProxyEvent): Preconditions {
  const ifMatch = findListHeader(event, 'if-match');
  const ifNoneMatch = findListHeader(event, 'if-none-match');
  return {
    ...(ifMatch === undefined
      ? {}
      : { ifMatch: versionsMatchedBy(parseEntityTagList(ifMatch)) ?? 'any' }),
    ...(ifNoneMatch === undefined ? {} : { ifNoneMatch: parseEntityTagList(ifNoneMatch) }),
  };
}

/** Whether the request holds for any version of an existing plant: no header, or `If-Match: *`. */
export function holdsForAnyVersion(preconditions: Preconditions): boolean {
  return preconditions.ifNoneMatch === undefined && (preconditions.ifMatch ?? 'any') === 'any';
}

/**
 * Evaluates the preconditions against `version`: `'not-modified'` for a read's matching
 * `If-None-Match` (304), `'proceed'` otherwise. @throws ApiError 41200
 */
export function evaluatePreconditions(
  preconditions: Preconditions,
  version: number,
  request: 'read' | 'write',
  subject: 'plant' | 'webhook endpoint' = 'plant',
): 'proceed' | 'not-modified' {
  const { ifMatch, ifNoneMatch } = preconditions;
  if (ifMatch !== undefined && ifMatch !== 'any' && !ifMatch.includes(version)) {
    throw preconditionFailed('If-Match', subject);
  }
  if (ifNoneMatch === undefined || !matchesWeakly(ifNoneMatch, version)) return 'proceed';
  if (request === 'read') return 'not-modified';
  throw preconditionFailed('If-None-Match', subject);
}
