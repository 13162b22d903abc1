/**
 * `POST …/test`: queues a signed `webhook.test` event, whatever the endpoint's state, and answers
 * 202 with its id; always the event envelope, so no receiver takes it for a plant.
 */
import { randomUUID } from 'node:crypto';
import { jsonResponse } from '../shared/http/api-responses.ts';
import { createRouteHandler } from '../shared/http/route-handler.ts';
import { formatTraceparent } from '../shared/platform/trace-context.ts';
import { firstDeliveryMessage } from '../shared/webhooks/delivery-message.ts';
import type { DeliveryQueue } from '../shared/webhooks/delivery-queue.ts';
import { countEndpointCall } from '../webhook-endpoints/endpoint-limits.ts';
import {
  type EndpointFunctionDependencies,
  endpointRequestOf,
  requireEndpoint,
} from '../webhook-endpoints/endpoint-request.ts';
import { endpointSubscriberName } from '../webhook-endpoints/endpoint-subscriptions.ts';
import { answerOnce } from '../webhook-endpoints/idempotency-keys.ts';

export interface Dependencies extends EndpointFunctionDependencies {
  /** Where the test event is queued. */
  readonly deliveries: DeliveryQueue;
}

export function createHandler(dependencies: Dependencies) {
  return createRouteHandler('test-webhook-endpoint', dependencies, async (route) => {
    const request = endpointRequestOf(route, dependencies);
    return answerOnce(request, 'test', undefined, async () => {
      const record = await requireEndpoint(request);
      const now = request.now();
      await countEndpointCall(record.id, 'test', now, request.stores);
      const eventId = `msg_test_${randomUUID().replaceAll('-', '')}`;
      const payload = JSON.stringify({
        type: 'webhook.test',
        timestamp: new Date(now).toISOString(),
        data: { endpointId: record.id },
      });
      // The test event belongs to the request that asked for it, and its trace.
      const event = { webhookId: eventId, payload, traceparent: formatTraceparent(route.trace) };
      const address = { id: record.id, owner: record.owner, type: 'webhook.test' };
      const subscriber = endpointSubscriberName(record.id);
      await dependencies.deliveries.send([firstDeliveryMessage(event, subscriber, now, address)]);
      return { response: jsonResponse(202, { eventId }) };
    });
  });
}
