/** `@plant-store/client`: the Plant Store API for browsers and Node.js. */
export {
  PlantStoreClient,
  type PlantStoreClientOptions,
  PlantStoreError,
} from './client.ts';
export { parseExactJson, stringifyExactJson } from './exact-json.ts';
export * from './types.ts';
export { type KeyedCallOptions, WebhookEndpoints } from './webhook-endpoints.ts';
export { PlantStoreWebhooks, type VerifiedWebhook } from './webhooks.ts';
