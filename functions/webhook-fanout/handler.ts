/**
 * Lambda entry of the webhook fan-out. Environment, read once at cold start:
 * `DELIVERY_QUEUE_URL` and `SUBSCRIPTIONS` (a JSON array of the stage's subscribers: `{name, events, format}`).
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { readFanoutConfig } from './config.ts';
import { createHandler } from './create-handler.ts';

const config = readFanoutConfig(process.env);

/** The Lambda entry; the client is created once per container and reused. */
export const handler = createHandler({ sqs: new SQSClient({}), ...config });
