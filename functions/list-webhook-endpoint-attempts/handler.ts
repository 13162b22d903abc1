/** Lambda entry of `GET /webhook-endpoints/{endpointId}/attempts`. */
import { readEndpointFunctionConfig } from '../webhook-endpoints/endpoint-config.ts';
import { createHandler } from './create-handler.ts';

export const handler = createHandler(readEndpointFunctionConfig('list-webhook-endpoint-attempts'));
