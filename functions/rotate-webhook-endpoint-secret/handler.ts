/** Lambda entry of `POST /webhook-endpoints/{endpointId}/secret/rotate`. */
import { kmsSecretBoxOf, readKeyedFunctionConfig } from '../webhook-endpoints/endpoint-config.ts';
import { createHandler } from './create-handler.ts';

export const handler = createHandler(
  readKeyedFunctionConfig('rotate-webhook-endpoint-secret', kmsSecretBoxOf),
);
