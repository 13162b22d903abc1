/** Lambda entry of `GET /webhook-endpoints/{endpointId}/secret`, configured once, at cold start. */
import { kmsOpenerOf, readKeyedFunctionConfig } from '../webhook-endpoints/endpoint-config.ts';
import { createHandler } from './create-handler.ts';

export const handler = createHandler(
  readKeyedFunctionConfig('get-webhook-endpoint-secret', kmsOpenerOf),
);
