/** Lambda entry of `POST /webhook-endpoints/{endpointId}/recover`. */
import { required } from '../shared/platform/configuration.ts';
import { createSqsClient, sqsDeliveryQueue } from '../shared/webhooks/delivery-queue.ts';
import { readEndpointFunctionConfig } from '../webhook-endpoints/endpoint-config.ts';
import { createHandler } from './create-handler.ts';

const { variables, ...config } = readEndpointFunctionConfig('recover-webhook-endpoint', {
  DELIVERY_QUEUE_URLS: required(),
});

export const handler = createHandler({
  ...config,
  deliveries: sqsDeliveryQueue(createSqsClient(), variables.DELIVERY_QUEUE_URLS),
});
