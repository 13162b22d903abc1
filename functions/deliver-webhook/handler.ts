/** Lambda entry of the webhook delivery, configured once, at cold start. */
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { createSqsClient } from '../shared/webhooks/delivery-queue.ts';
import { endpointStoresOf, kmsOpenerOf } from '../webhook-endpoints/endpoint-config.ts';
import { readDeliverConfig } from './config.ts';
import { createHandler } from './create-handler.ts';

const { secretsManagerUrl, endpoints, ...config } = readDeliverConfig(process.env);

/** The webhook endpoints' stores and key, where the stage has them. */
function endpointDependencies(settings: NonNullable<typeof endpoints>) {
  const stores = endpointStoresOf(settings);
  const { documentClient, endpointsTableName: tableName } = stores;
  const secretBox = kmsOpenerOf(settings, { documentClient, tableName });
  return { stores, secretBox, urlPolicy: settings.urlPolicy };
}

/** The Lambda entry; the clients and the secrets' cache live as long as the container. */
export const handler = createHandler({
  sqs: createSqsClient(),
  secretsManager: new SecretsManagerClient(
    secretsManagerUrl === undefined ? {} : { endpoint: secretsManagerUrl },
  ),
  ...(endpoints === undefined ? {} : { endpoints: endpointDependencies(endpoints) }),
  ...config,
});
