/**
 * The fan-out's subscribers with endpoints: the stage configuration's, and every enabled webhook
 * endpoint, read from the endpoints table's sparse `subscriptions` index at most every
 * {@link endpointListMaxAgeMilliseconds}. So an endpoint created, changed or re-enabled hears of
 * the events that happen from 5 seconds after the answer (4 s of cache, and the index's
 * propagation, which AWS says is normally a fraction of a second); a delete, a disable or a new
 * URL counts at once, because the delivery reads the endpoint again as it sends.
 */

import type { Subscription } from '../shared/webhooks/plant-events.ts';
import type { SubscriptionSource } from '../shared/webhooks/queue-deliveries.ts';
import { type EndpointTable, listSubscribedEndpoints } from './endpoint-store.ts';

/** How old the endpoint list the fan-out uses may be. */
export const endpointListMaxAgeMilliseconds = 4_000;

/** The subscriber name of an endpoint, in messages and logs. */
export function endpointSubscriberName(id: string): string {
  return `endpoint:${id}`;
}

/**
 * The stage's subscriptions followed by the enabled endpoints', the latter re-read when older than
 * `maxAgeMilliseconds`. A failed read rejects (the fan-out then retries the batch): endpoints
 * are never silently left out.
 */
export function withEndpointSubscriptions(
  stage: readonly Subscription[],
  table: EndpointTable,
  options: { readonly maxAgeMilliseconds?: number; readonly now?: () => number } = {},
): SubscriptionSource {
  const maxAge = options.maxAgeMilliseconds ?? endpointListMaxAgeMilliseconds;
  const now = options.now ?? Date.now;
  let cached: { readonly at: number; readonly list: readonly Subscription[] } | undefined;
  return {
    current: async () => {
      if (cached === undefined || now() - cached.at >= maxAge) {
        const at = now();
        const endpoints = await listSubscribedEndpoints(table);
        cached = {
          at,
          list: [
            ...stage,
            ...endpoints.map((endpoint) => ({
              name: endpointSubscriberName(endpoint.id),
              events: endpoint.events,
              format: endpoint.format,
              endpoint: { id: endpoint.id, owner: endpoint.owner },
            })),
          ],
        };
      }
      return cached.list;
    },
  };
}
