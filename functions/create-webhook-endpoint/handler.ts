/** Lambda entry of `POST /webhook-endpoints`, configured once, at cold start. */
import {
  endpointUrlsVariable,
  kmsSecretBoxOf,
  readKeyedFunctionConfig,
} from '../webhook-endpoints/endpoint-config.ts';
import { createHandler } from './create-handler.ts';

const config = readKeyedFunctionConfig('create-webhook-endpoint', kmsSecretBoxOf, {
  WEBHOOK_ENDPOINT_URLS: endpointUrlsVariable(process.env),
});

export const handler = createHandler({
  ...config,
  urlPolicy: config.variables.WEBHOOK_ENDPOINT_URLS,
});
