/**
 * Lambda entry of `GET /webhook-endpoints`, configured at cold start (`readEndpointFunctionConfig`).
 */
import { readEndpointFunctionConfig } from '../webhook-endpoints/endpoint-config.ts';
import { createHandler } from './create-handler.ts';

const { variables: _, ...config } = readEndpointFunctionConfig(
  'list-webhook-endpoints',
  process.env,
);

export const handler = createHandler(config);
