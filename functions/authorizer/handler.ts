/** Lambda entry of the TOKEN authorizer, configured once, at cold start. */
import {
  apiGatewayControlPlane,
  createClientKeyRegistry,
  dynamoDbKeyRecords,
  type SignedCallSettings,
} from './client-keys.ts';
import { readAuthorizerConfig } from './config.ts';
import { createHandler } from './create-handler.ts';

const config = readAuthorizerConfig(process.env);
const { usagePlanName, clientKeysTableName } = config;

/** The calls' region and credentials, as Lambda's runtime sets them. */
const signed = (endpoint: string | undefined): SignedCallSettings => ({
  region: process.env.AWS_REGION ?? 'us-east-1',
  endpoint,
  appId: process.env.AWS_SDK_UA_APP_ID,
  credentials: () => ({
    accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? '',
    secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? '',
    sessionToken: process.env.AWS_SESSION_TOKEN,
  }),
});

/** The Lambda entry; the JWKS cache and the keys known in the plan live as long as the container. */
export const handler = createHandler(config, {
  registerClientKey:
    usagePlanName === undefined || clientKeysTableName === undefined
      ? undefined
      : createClientKeyRegistry(
          apiGatewayControlPlane(signed(config.apiGatewayUrl)),
          dynamoDbKeyRecords(signed(config.dynamoDbUrl), clientKeysTableName),
          usagePlanName,
        ),
});
