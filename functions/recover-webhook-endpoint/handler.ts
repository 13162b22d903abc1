/** Lambda entry of `POST /webhook-endpoints/{endpointId}/recover`. */
import { SQSClient } from '@aws-sdk/client-sqs';
import { required } from '../shared/platform/configuration.ts';
import { sqsDeliveryQueue } from '../shared/webhooks/delivery-queue.ts';
import { readEndpointFunctionConfig } from '../webhook-endpoints/endpoint-config.ts';
import { createHandler } from './create-handler.ts';

const { variables, ...config } = readEndpointFunctionConfig(
  'recover-webhook-endpoint',
  process.env,
  {
    DELIVERY_QUEUE_URL: required(),
  },
);

export const handler = createHandler({
  ...config,
  deliveries: sqsDeliveryQueue(new SQSClient({}), variables.DELIVERY_QUEUE_URL),
});
