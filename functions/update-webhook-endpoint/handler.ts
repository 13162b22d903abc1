/** Lambda entry of `PATCH /webhook-endpoints/{endpointId}`, configured once, at cold start. */
import {
  endpointUrlsVariable,
  readEndpointFunctionConfig,
} from '../webhook-endpoints/endpoint-config.ts';
import { createHandler } from './create-handler.ts';

const { variables, ...config } = readEndpointFunctionConfig('update-webhook-endpoint', {
  WEBHOOK_ENDPOINT_URLS: endpointUrlsVariable(process.env),
});

export const handler = createHandler({ ...config, urlPolicy: variables.WEBHOOK_ENDPOINT_URLS });
