/**
 * Lambda entry of the TOKEN authorizer. Environment, read and checked once at cold start (a
 * missing or wrong setting fails the start, naming every problem): see `config.ts`.
 */
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { createClientKeyRegistry } from './client-keys.ts';
import { readAuthorizerConfig } from './config.ts';
import { createHandler } from './create-handler.ts';

const config = readAuthorizerConfig(process.env);

/** The Lambda entry; the JWKS cache and the clients registered live as long as the container. */
export const handler = createHandler(config, {
  ...(config.usagePlanName === undefined
    ? {}
    : {
        registerClientKey: createClientKeyRegistry(
          new APIGatewayClient({
            ...(config.apiGatewayUrl === undefined ? {} : { endpoint: config.apiGatewayUrl }),
            // A registration delays the first request of a client: a hung call must fail fast.
            maxAttempts: 2,
            requestHandler: { connectionTimeout: 1_000, requestTimeout: 1_500 },
          }),
          config.usagePlanName,
        ),
      }),
});
