/** Lambda entry of the TOKEN authorizer, configured once, at cold start. */
import { lambdaSignedSettings } from '../shared/platform/signed-calls.ts';
import {
  apiGatewayControlPlane,
  createClientKeyRegistry,
  dynamoDbKeyRecords,
} from './client-keys.ts';
import { readAuthorizerConfig } from './config.ts';
import { createHandler } from './create-handler.ts';

const config = readAuthorizerConfig(process.env);
const { usagePlanName, clientKeysTableName } = config;

/** The Lambda entry; the JWKS cache and the keys known in the plan live as long as the container. */
export const handler = createHandler(config, {
  registerClientKey:
    usagePlanName === undefined || clientKeysTableName === undefined
      ? undefined
      : createClientKeyRegistry(
          apiGatewayControlPlane(lambdaSignedSettings(config.apiGatewayUrl)),
          dynamoDbKeyRecords(lambdaSignedSettings(config.dynamoDbUrl), clientKeysTableName),
          usagePlanName,
        ),
});
