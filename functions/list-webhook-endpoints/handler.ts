/** Lambda entry of `GET /webhook-endpoints`, configured once, at cold start. */
import { readEndpointFunctionConfig } from '../webhook-endpoints/endpoint-config.ts';
import { createHandler } from './create-handler.ts';

export const handler = createHandler(readEndpointFunctionConfig('list-webhook-endpoints'));
