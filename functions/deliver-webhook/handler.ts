/**
 * Lambda entry of the webhook delivery. Environment, read once at cold start: see `config.ts`.
 */
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import { readDeliverConfig } from './config.ts';
import { createHandler } from './create-handler.ts';

const { secretsManagerEndpoint, ...config } = readDeliverConfig(process.env);

/** The Lambda entry; the clients and the secrets' cache live as long as the container. */
export const handler = createHandler({
  sqs: new SQSClient({}),
  secretsManager: new SecretsManagerClient(
    secretsManagerEndpoint === undefined ? {} : { endpoint: secretsManagerEndpoint },
  ),
  ...config,
});
