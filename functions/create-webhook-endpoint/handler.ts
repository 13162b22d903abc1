/** Lambda entry of `POST /webhook-endpoints`, configured once, at cold start. */
import {
  endpointUrlsVariable,
  kmsSealerOf,
  readEndpointFunctionConfig,
  secretsKeySettingsOf,
  secretsKeyVariables,
} from '../webhook-endpoints/endpoint-config.ts';
import { createHandler } from './create-handler.ts';

const { variables, ...config } = readEndpointFunctionConfig(
  'create-webhook-endpoint',
  process.env,
  { ...secretsKeyVariables, WEBHOOK_ENDPOINT_URLS: endpointUrlsVariable(process.env) },
);

export const handler = createHandler({
  ...config,
  secretBox: kmsSealerOf(secretsKeySettingsOf(variables)),
  urlPolicy: variables.WEBHOOK_ENDPOINT_URLS,
});
