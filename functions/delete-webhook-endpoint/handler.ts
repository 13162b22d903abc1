/** Lambda entry of `DELETE /webhook-endpoints/{endpointId}`, configured once, at cold start. */
import { readEndpointFunctionConfig } from '../webhook-endpoints/endpoint-config.ts';
import { createHandler } from './create-handler.ts';

export const handler = createHandler(readEndpointFunctionConfig('delete-webhook-endpoint'));
