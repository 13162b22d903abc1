/** Lambda entry of `POST /webhook-endpoints/{endpointId}/secret/rotate`. */
import {
  kmsSealerOf,
  readEndpointFunctionConfig,
  secretsKeySettingsOf,
  secretsKeyVariables,
} from '../webhook-endpoints/endpoint-config.ts';
import { createHandler } from './create-handler.ts';

const { variables, ...config } = readEndpointFunctionConfig(
  'rotate-webhook-endpoint-secret',
  process.env,
  secretsKeyVariables,
);

export const handler = createHandler({
  ...config,
  secretBox: kmsSealerOf(secretsKeySettingsOf(variables)),
});
