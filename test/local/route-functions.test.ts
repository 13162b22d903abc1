/**
 * The dependencies the local API gives every route function cover what each one declares: a
 * function that adds a dependency the local API does not give fails to compile here (`npm test`
 * runs tsc), and a route whose function is missing from this list fails below.
 */
import { expect, it } from '@jest/globals';
import { createHandler as createPlant } from '../../functions/create-plant/create-handler.ts';
import { createHandler as createWebhookEndpoint } from '../../functions/create-webhook-endpoint/create-handler.ts';
import { createHandler as deletePlant } from '../../functions/delete-plant/create-handler.ts';
import { createHandler as deleteWebhookEndpoint } from '../../functions/delete-webhook-endpoint/create-handler.ts';
import { createHandler as getPlant } from '../../functions/get-plant/create-handler.ts';
import { createHandler as getWebhookEndpoint } from '../../functions/get-webhook-endpoint/create-handler.ts';
import { createHandler as getWebhookEndpointSecret } from '../../functions/get-webhook-endpoint-secret/create-handler.ts';
import { createHandler as listPlants } from '../../functions/list-plants/create-handler.ts';
import { createHandler as listWebhookEndpointAttempts } from '../../functions/list-webhook-endpoint-attempts/create-handler.ts';
import { createHandler as listWebhookEndpoints } from '../../functions/list-webhook-endpoints/create-handler.ts';
import { createHandler as recoverWebhookEndpoint } from '../../functions/recover-webhook-endpoint/create-handler.ts';
import { createHandler as rotateWebhookEndpointSecret } from '../../functions/rotate-webhook-endpoint-secret/create-handler.ts';
import { routeFunctionNames } from '../../functions/shared/http/routes.ts';
import { createHandler as testWebhookEndpoint } from '../../functions/test-webhook-endpoint/create-handler.ts';
import { createHandler as updatePlant } from '../../functions/update-plant/create-handler.ts';
import { createHandler as updateWebhookEndpoint } from '../../functions/update-webhook-endpoint/create-handler.ts';
import {
  loadRouteHandlerFactories,
  type RouteFunctionDependencies,
} from '../../local/route-functions.ts';

/** Each factory, typed as taking the local API's dependencies: tsc checks each assignment. */
const factories: Record<string, (dependencies: RouteFunctionDependencies) => unknown> = {
  createPlant,
  listPlants,
  getPlant,
  updatePlant,
  deletePlant,
  createWebhookEndpoint,
  listWebhookEndpoints,
  getWebhookEndpoint,
  updateWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpointSecret,
  rotateWebhookEndpointSecret,
  testWebhookEndpoint,
  listWebhookEndpointAttempts,
  recoverWebhookEndpoint,
};

it('lists every route function of the route table, and the local API loads each', async () => {
  expect(Object.keys(factories).sort()).toEqual([...routeFunctionNames].sort());
  const loaded = await loadRouteHandlerFactories();
  for (const name of routeFunctionNames) expect(loaded.get(name)).toBe(factories[name]);
});
