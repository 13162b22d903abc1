/**
 * Lambda entry of the webhook delivery. Environment, read once at cold start:
 * `RETRY_QUEUE_URL`, `DEAD_LETTER_QUEUE_URL` and `SUBSCRIBERS` (a JSON array of
 * `{name, url, secretArn}`; the secrets themselves are read from Secrets Manager).
 */
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import { readDeliverConfig } from './config.ts';
import { createHandler } from './create-handler.ts';

const config = readDeliverConfig(process.env);

/** The Lambda entry; the clients and the secrets' cache live as long as the container. */
export const handler = createHandler({
  sqs: new SQSClient({}),
  secretsManager: new SecretsManagerClient({}),
  ...config,
});
