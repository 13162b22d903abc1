/**
 * `POST /webhook-endpoints/{endpointId}/test`: queues a signed event of type `webhook.test` for
 * the endpoint, whatever its state, and answers 202 with the event's id; its attempts show under
 * `GET …/attempts`. The body is always the event format's envelope, so no receiver can take it
 * for a plant: `{"type":"webhook.test","timestamp":…,"data":{"endpointId":…}}`.
 */
import { randomUUID } from 'node:crypto';
import { jsonResponse } from '../shared/http/api-responses.ts';
import { firstDeliveryMessage } from '../shared/webhooks/delivery-message.ts';
import {
  createEndpointHandler,
  type EndpointHandlerDependencies,
  required,
  requireEndpoint,
} from '../webhook-endpoints/endpoint-function.ts';
import { endpointSubscriberName } from '../webhook-endpoints/endpoint-subscriptions.ts';

/** Builds the middy handler around its dependencies (the local API and tests bring their own). */
export function createHandler(dependencies: EndpointHandlerDependencies) {
  const deliveries = required(dependencies.deliveries, 'delivery queue');
  return createEndpointHandler('test-webhook-endpoint', dependencies, async (request) => {
    const record = await requireEndpoint(request);
    const now = request.now();
    const eventId = `msg_test_${randomUUID().replaceAll('-', '')}`;
    const payload = JSON.stringify({
      type: 'webhook.test',
      timestamp: new Date(now).toISOString(),
      data: { endpointId: record.id },
    });
    await deliveries.send([
      firstDeliveryMessage(
        { webhookId: eventId, payload },
        endpointSubscriberName(record.id),
        now,
        { id: record.id, owner: record.owner, type: 'webhook.test' },
      ),
    ]);
    return jsonResponse(202, { eventId });
  });
}
