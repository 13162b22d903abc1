/** Lambda entry of `GET /webhook-endpoints/{endpointId}`, configured once, at cold start. */
import { readEndpointFunctionConfig } from '../webhook-endpoints/endpoint-config.ts';
import { createHandler } from './create-handler.ts';

const { variables: _, ...config } = readEndpointFunctionConfig('get-webhook-endpoint', process.env);

export const handler = createHandler(config);
