/**
 * Lambda entry of `POST /webhook-endpoints/{endpointId}/recover`. Environment, read once at cold start: see `config.ts`.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { createDocumentClient } from '../shared/platform/dynamodb.ts';
import { sqsDeliveryQueue } from '../shared/webhooks/delivery-queue.ts';
import { readConfig } from './config.ts';
import { createHandler } from './create-handler.ts';

const { dynamoDbUrl, deliveryQueueUrl, ...config } = readConfig(process.env);

export const handler = createHandler({
  documentClient: createDocumentClient({ url: dynamoDbUrl }),
  deliveries: sqsDeliveryQueue(new SQSClient({}), deliveryQueueUrl),
  ...config,
});
