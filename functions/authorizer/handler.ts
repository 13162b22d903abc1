/** Lambda entry of the TOKEN authorizer, configured once, at cold start. */
import { apiGatewayControlPlane, createClientKeyRegistry } from './client-keys.ts';
import { readAuthorizerConfig } from './config.ts';
import { createHandler } from './create-handler.ts';

const config = readAuthorizerConfig(process.env);

/** The Lambda entry; the JWKS cache and the clients registered live as long as the container. */
export const handler = createHandler(config, {
  ...(config.usagePlanName === undefined
    ? {}
    : {
        registerClientKey: createClientKeyRegistry(
          apiGatewayControlPlane({
            region: process.env.AWS_REGION ?? 'us-east-1',
            // An emulator's, where one is named (`sam local`, or one that sets AWS_ENDPOINT_URL).
            endpoint: config.apiGatewayUrl ?? (process.env.AWS_ENDPOINT_URL?.trim() || undefined),
            credentials: () => ({
              accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? '',
              secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? '',
              sessionToken: process.env.AWS_SESSION_TOKEN,
            }),
          }),
          config.usagePlanName,
        ),
      }),
});
