/** Lambda entry of `GET /webhook-endpoints/{endpointId}/secret`, configured once, at cold start. */
import {
  kmsOpenerOf,
  readEndpointFunctionConfig,
  secretsKeySettingsOf,
  secretsKeyVariables,
} from '../webhook-endpoints/endpoint-config.ts';
import { createHandler } from './create-handler.ts';

const { variables, ...config } = readEndpointFunctionConfig(
  'get-webhook-endpoint-secret',
  process.env,
  secretsKeyVariables,
);

export const handler = createHandler({
  ...config,
  secretBox: kmsOpenerOf(secretsKeySettingsOf(variables)),
});
