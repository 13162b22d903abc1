/**
 * Lambda entry of the stream-failure replay, run by hand (docs/webhooks.md). Environment, read
 * once at cold start: `STREAM_FAILURES_BUCKET`, `DELIVERY_QUEUE_URL` and `SUBSCRIPTIONS`.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { readReplayConfig } from './config.ts';
import { createHandler } from './create-handler.ts';

const config = readReplayConfig(process.env);

/** The Lambda entry; the clients are created once per container. */
export const handler = createHandler({
  s3: new S3Client({}),
  sqs: new SQSClient({}),
  ...config,
});
