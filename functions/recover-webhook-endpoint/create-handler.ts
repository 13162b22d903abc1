/**
 * `POST …/recover` `{"since"}`: queues again every kept event since then that the endpoint hears
 * of and has not had, each claimed first, so at most one delivery of it is under way however
 * often this is called (`webhook-log.ts`); {@link recoverCap} a call, then `"more": true`.
 */
import { randomUUID } from 'node:crypto';
import * as v from 'valibot';
import { endpointErrorCodes } from '../shared/errors/error-codes.ts';
import { ApiError } from '../shared/errors/errors.ts';
import { jsonResponse } from '../shared/http/api-responses.ts';
import { readJsonBody } from '../shared/http/json-body.ts';
import { createRouteHandler } from '../shared/http/route-handler.ts';
import { forEachConcurrently } from '../shared/platform/concurrency.ts';
import { retryWhileUnavailable } from '../shared/platform/dynamodb.ts';
import { onMargin } from '../shared/platform/invocation-budget.ts';
import { type DeliveryMessage, firstDeliveryMessage } from '../shared/webhooks/delivery-message.ts';
import { type DeliveryQueue, unsentOf } from '../shared/webhooks/delivery-queue.ts';
import { type PlantEvent, webhookFor } from '../shared/webhooks/plant-events.ts';
import type { EndpointRecord } from '../webhook-endpoints/endpoint.ts';
import { countEndpointCall, recoverCap } from '../webhook-endpoints/endpoint-limits.ts';
import {
  type EndpointFunctionDependencies,
  type EndpointRequest,
  endpointRequestOf,
  requireEndpoint,
} from '../webhook-endpoints/endpoint-request.ts';
import { endpointSubscriberName } from '../webhook-endpoints/endpoint-subscriptions.ts';
import { answerOnce } from '../webhook-endpoints/idempotency-keys.ts';
import {
  claimDelivery,
  deliveryStates,
  endDelivery,
  eventsBetween,
  keptMilliseconds,
  type WebhookLogTable,
} from '../webhook-endpoints/webhook-log.ts';

export interface Dependencies extends EndpointFunctionDependencies {
  /** Where the missed events are queued. */
  readonly deliveries: DeliveryQueue;
}

export function createHandler(dependencies: Dependencies) {
  return createRouteHandler('recover-webhook-endpoint', dependencies, async (route) => {
    const request = endpointRequestOf(route, dependencies);
    const now = request.now();
    const since = readSince(readJsonBody(request.event), now);
    return answerOnce(request, 'recover', undefined, async () => {
      const record = await requireEndpoint(request);
      if (!record.enabled) throw new ApiError(endpointErrorCodes.webhookEndpointDisabled);
      await countEndpointCall(record.id, 'recover', now, request.stores);
      // Event times are whole seconds (the stream's): from the second the endpoint was made.
      const from = Math.max(since, Math.floor(Date.parse(record.createdAt) / 1000) * 1000);
      const missed = await missedEvents(record, from, now, request.stores);
      const claimed = await claimedMessages(record, missed.slice(0, recoverCap), now, request);
      const { messages } = claimed;
      try {
        await dependencies.deliveries.send(messages);
      } catch (error) {
        // Not queued: their claims go, so that the next recover queues them; the queued keep theirs.
        await onMargin(() => releaseClaims(record, unsentOf(error, messages), now, request));
        throw error;
      }
      // Every claim this call may hold has its message queued: a retry finds the rest.
      if (claimed.failure !== undefined) throw claimed.failure;
      const events = messages.length;
      request.logger.info('webhook endpoint recovering', { endpointId: record.id, events });
      return { response: jsonResponse(202, { events, more: missed.length > recoverCap }) };
    });
  });
}

/** The body: `since`, an RFC 3339 time (a date, a time, any fraction, Z or an offset). */
export const recoverSchema = v.object({
  since: v.pipe(
    v.string(),
    v.regex(/^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)$/),
  ),
});

/** `since`: RFC 3339, not in the future, within 7 days. @throws ApiError 40028, 40020 */
function readSince(body: unknown, now: number): number {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ApiError(
      endpointErrorCodes.invalidWebhookEndpoint,
      'The body must be a JSON object: {"since": …}.',
    );
  }
  const parsed = v.safeParse(recoverSchema, body);
  const time = parsed.success ? Date.parse(parsed.output.since) : Number.NaN;
  if (Number.isNaN(time) || time > now || time < now - keptMilliseconds) {
    throw new ApiError(
      endpointErrorCodes.invalidRecoverySince,
      'since must be an RFC 3339 time from the last 7 days, such as 2026-11-25T10:00:00Z.',
    );
  }
  return time;
}

/** The kept events it hears of, neither had nor pending, oldest first, one past the cap at most. */
async function missedEvents(
  record: EndpointRecord,
  from: number,
  now: number,
  log: WebhookLogTable,
): Promise<PlantEvent[]> {
  const missed: PlantEvent[] = [];
  let batch: PlantEvent[] = [];
  const sift = async () => {
    const ids = batch.map((event) => event.webhookId);
    const states = await deliveryStates(record.id, ids, log);
    for (const event of batch) {
      const state = states.get(event.webhookId);
      const pending = state?.state === 'pending' && state.staleAt > now;
      if (state?.state !== 'delivered' && !pending) missed.push(event);
    }
    batch = [];
  };
  for await (const event of eventsBetween(from, now, log)) {
    if (!record.events.includes(event.type)) continue;
    batch.push(event);
    if (batch.length === 100) await sift();
    if (missed.length > recoverCap) return missed;
  }
  await sift();
  return missed;
}

/** How long a recover's claim holds without its first attempt: then another may claim. */
export const recoverClaimHoldMilliseconds = 2 * 60 * 1000;

/**
 * The first message of each event this recover claimed, ten claims at a time. A claim that fails
 * stops the claiming, its failure kept for the answer; its event still gets its message (the
 * claim may have been written, and the delivery claims again), so no claim is left without one.
 */
async function claimedMessages(
  record: EndpointRecord,
  events: readonly PlantEvent[],
  now: number,
  request: EndpointRequest,
): Promise<{ messages: DeliveryMessage[]; failure?: unknown }> {
  const subscription = {
    name: endpointSubscriberName(record.id),
    events: record.events,
    format: record.format,
  };
  const messages: DeliveryMessage[] = [];
  let failure: unknown;
  await forEachConcurrently(events, 10, async (event) => {
    const webhook = failure === undefined ? webhookFor(event, subscription) : undefined;
    if (webhook === undefined) return;
    const deliveryId = randomUUID();
    const claim = await claimDelivery(record.id, event.webhookId, deliveryId, now, request.stores, {
      holdMilliseconds: recoverClaimHoldMilliseconds,
    }).catch((error: unknown) => {
      failure ??= error;
      return 'uncertain' as const;
    });
    if (claim !== 'claimed' && claim !== 'uncertain') return;
    const address = { id: record.id, owner: record.owner, type: event.type };
    messages.push(firstDeliveryMessage(webhook, subscription.name, now, address, deliveryId));
  });
  return failure === undefined ? { messages } : { messages, failure };
}

/**
 * Ends the claims of messages not queued, each only as this call wrote it (`claimedAt`), never one
 * a delivery renewed meanwhile; one still refused holds only until it goes stale.
 */
async function releaseClaims(
  record: EndpointRecord,
  messages: readonly DeliveryMessage[],
  claimedAt: number,
  request: EndpointRequest,
): Promise<void> {
  await forEachConcurrently(messages, 10, async ({ webhookId, deliveryId = '' }) => {
    await retryWhileUnavailable(() =>
      endDelivery(record.id, webhookId, deliveryId, request.stores, claimedAt),
    ).catch((error: unknown) =>
      request.logger.warn('webhook recover claim not released', {
        endpointId: record.id,
        webhookId,
        error,
      }),
    );
  });
}
