/** Lambda entry of the TOKEN authorizer, configured once, at cold start. */
import { apiGatewayControlPlane, createClientKeyRegistry } from './client-keys.ts';
import { readAuthorizerConfig } from './config.ts';
import { createHandler } from './create-handler.ts';

const config = readAuthorizerConfig(process.env);
const { usagePlanName } = config;

/** The Lambda entry; the JWKS cache and the clients registered live as long as the container. */
export const handler = createHandler(config, {
  registerClientKey:
    usagePlanName === undefined
      ? undefined
      : createClientKeyRegistry(
          apiGatewayControlPlane({
            // Lambda's runtime sets the region and the credentials.
            region: process.env.AWS_REGION ?? 'us-east-1',
            endpoint: config.apiGatewayUrl,
            appId: process.env.AWS_SDK_UA_APP_ID,
            credentials: () => ({
              accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? '',
              secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? '',
              sessionToken: process.env.AWS_SESSION_TOKEN,
            }),
          }),
          usagePlanName,
        ),
});
