/** Lambda entry of `GET /webhook-endpoints/{endpointId}/attempts`. */
import { readEndpointFunctionConfig } from '../webhook-endpoints/endpoint-config.ts';
import { createHandler } from './create-handler.ts';

const { variables: _, ...config } = readEndpointFunctionConfig(
  'list-webhook-endpoint-attempts',
  process.env,
);

export const handler = createHandler(config);
