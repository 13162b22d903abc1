/** Lambda entry of `GET /webhook-endpoints`, configured once, at cold start. */
import { readEndpointFunctionConfig } from '../webhook-endpoints/endpoint-config.ts';
import { createHandler } from './create-handler.ts';

const { variables: _, ...config } = readEndpointFunctionConfig(
  'list-webhook-endpoints',
  process.env,
);

export const handler = createHandler(config);
