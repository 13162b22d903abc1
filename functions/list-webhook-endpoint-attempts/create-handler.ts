/**
 * `GET /webhook-endpoints/{endpointId}/attempts`: every attempt at the endpoint in the log's 7
 * days, newest first (event id and type, number, outcome, status, duration, when), paged.
 */
import { jsonResponse } from '../shared/http/api-responses.ts';
import { keyCursorOf, keyOfCursor, nextLink, readPage } from '../shared/http/paging.ts';
import { createRouteHandler } from '../shared/http/route-handler.ts';
import {
  type EndpointFunctionDependencies,
  endpointRequestOf,
  requireEndpoint,
} from '../webhook-endpoints/endpoint-request.ts';
import { listAttempts } from '../webhook-endpoints/webhook-log.ts';

// An attempt's key in the log: its time, the event's id and the attempt's number.
const attemptKeyPattern = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z#[A-Za-z0-9_-]{1,200}#\d{2}$/;

export function createHandler(dependencies: EndpointFunctionDependencies) {
  return createRouteHandler('list-webhook-endpoint-attempts', dependencies, async (route) => {
    const request = endpointRequestOf(route, dependencies);
    const page = readPage(request.event, (cursor) => keyOfCursor(cursor, attemptKeyPattern));
    const record = await requireEndpoint(request);
    const { attempts, last } = await listAttempts(record.id, page, request.stores);
    const headers: Record<string, string> =
      last === undefined ? {} : { Link: nextLink(request.event, page.limit, keyCursorOf(last)) };
    return jsonResponse(200, attempts, headers);
  });
}
