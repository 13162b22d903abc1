/** Lambda entry of `DELETE /webhook-endpoints/{endpointId}`, configured once, at cold start. */
import { readEndpointFunctionConfig } from '../webhook-endpoints/endpoint-config.ts';
import { createHandler } from './create-handler.ts';

const { variables: _, ...config } = readEndpointFunctionConfig(
  'delete-webhook-endpoint',
  process.env,
);

export const handler = createHandler(config);
