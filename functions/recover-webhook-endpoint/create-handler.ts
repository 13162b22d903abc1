/**
 * `POST /webhook-endpoints/{endpointId}/recover` `{"since": RFC 3339}`: queues again every kept
 * event since then (at most 7 days back, and none from before the endpoint existed) of a type it
 * hears of that it has not had delivered, events that happened while it was disabled included:
 * once each, in its current format, on the usual schedule. A disabled endpoint is enabled first
 * (409 otherwise): its deliveries would not be sent.
 */

import { endpointErrorCodes } from '../shared/errors/error-codes.ts';
import { ApiError } from '../shared/errors/errors.ts';
import { jsonResponse } from '../shared/http/api-responses.ts';
import { readJsonBody } from '../shared/http/json-body.ts';
import { createRouteHandler } from '../shared/http/route-handler.ts';
import { firstDeliveryMessage } from '../shared/webhooks/delivery-message.ts';
import type { DeliveryQueue } from '../shared/webhooks/delivery-queue.ts';
import { type PlantEvent, webhookFor } from '../shared/webhooks/plant-events.ts';
import {
  type EndpointFunctionDependencies,
  endpointRequestOf,
  requireEndpoint,
} from '../webhook-endpoints/endpoint-request.ts';
import { endpointSubscriberName } from '../webhook-endpoints/endpoint-subscriptions.ts';
import {
  deliveredAmong,
  eventsBetween,
  keptMilliseconds,
} from '../webhook-endpoints/webhook-log.ts';

// RFC 3339: a date, a time, seconds with any fraction, and an offset (Z or ±hh:mm).
const rfc3339 = /^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)$/;

/** What the function needs (its Lambda entry, the local API and the tests each give it). */
export interface Dependencies extends EndpointFunctionDependencies {
  /** Where the missed events are queued. */
  readonly deliveries: DeliveryQueue;
}

export function createHandler(dependencies: Dependencies) {
  return createRouteHandler('recover-webhook-endpoint', dependencies, async (route) => {
    const request = endpointRequestOf(route, dependencies);
    const now = request.now();
    const since = readSince(readJsonBody(request.event), now);
    const record = await requireEndpoint(request);
    if (!record.enabled) throw new ApiError(endpointErrorCodes.webhookEndpointDisabled);
    const subscription = {
      name: endpointSubscriberName(record.id),
      events: record.events,
      format: record.format,
    };
    const missed: PlantEvent[] = [];
    // Event times are whole seconds (the stream's): from the second the endpoint was made.
    const from = Math.max(since, Math.floor(Date.parse(record.createdAt) / 1000) * 1000);
    for await (const event of eventsBetween(from, now, request.log)) {
      if (record.events.includes(event.type)) missed.push(event);
    }
    const delivered = await deliveredAmong(
      record.id,
      missed.map((event) => event.webhookId),
      request.log,
    );
    const messages = missed
      .filter((event) => !delivered.has(event.webhookId))
      .flatMap((event) => {
        const webhook = webhookFor(event, subscription);
        return webhook === undefined
          ? []
          : [
              firstDeliveryMessage(webhook, subscription.name, now, {
                id: record.id,
                owner: record.owner,
                type: event.type,
              }),
            ];
      });
    await dependencies.deliveries.send(messages);
    request.logger.info('webhook endpoint recovering', {
      endpointId: record.id,
      events: messages.length,
    });
    return jsonResponse(202, { events: messages.length });
  });
}

/**
 * `since` of the body: an RFC 3339 time, not in the future, within the 7 days events are kept.
 * @throws ApiError 40028 otherwise, 40020 when the body is not an object.
 */
function readSince(body: unknown, now: number): number {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ApiError(
      endpointErrorCodes.invalidWebhookEndpoint,
      'The body must be a JSON object: {"since": …}.',
    );
  }
  const { since } = body as { since?: unknown };
  const time = typeof since === 'string' && rfc3339.test(since) ? Date.parse(since) : Number.NaN;
  if (Number.isNaN(time) || time > now || time < now - keptMilliseconds) {
    throw new ApiError(
      endpointErrorCodes.invalidRecoverySince,
      'since must be an RFC 3339 time from the last 7 days, such as 2026-11-25T10:00:00Z.',
    );
  }
  return time;
}
