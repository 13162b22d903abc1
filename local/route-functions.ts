/**
 * The route functions as the local API runs them: each one's `createHandler` (the same code
 * Lambda runs, free of the entry's module-scope effects), found by the route table, and the
 * dependencies the local API gives every one of them.
 */
import {
  type RouteFunctionName,
  routeFunctionFolder,
  routeFunctionNames,
} from '../functions/shared/http/routes.ts';
import type { PlantsFunctionDependencies } from '../functions/shared/plants/plants-function.ts';
import type { DeliveryQueue } from '../functions/shared/webhooks/delivery-queue.ts';
import type { EndpointFunctionDependencies } from '../functions/webhook-endpoints/endpoint-request.ts';
import type { EndpointUrlPolicy } from '../functions/webhook-endpoints/endpoint-url.ts';
import type { SecretBox } from '../functions/webhook-endpoints/secret-box.ts';
import type { ProxyIntegrationHandler } from './api-gateway/gateway.ts';

/**
 * Everything any route function needs: each takes its part (`test/local/route-functions.test.ts`
 * checks that every function's `Dependencies` is covered, at compile time).
 */
export type RouteFunctionDependencies = PlantsFunctionDependencies &
  EndpointFunctionDependencies & {
    readonly secretBox: SecretBox;
    readonly urlPolicy: EndpointUrlPolicy;
    readonly deliveries: DeliveryQueue;
  };

/** A route function's `createHandler`. */
export type RouteHandlerFactory = (
  dependencies: RouteFunctionDependencies,
) => ProxyIntegrationHandler;

/**
 * Every route function's `createHandler`, imported by `importModule` (a URL of the repository's
 * files; the local API's hot reload gives one that imports them afresh).
 */
export async function loadRouteHandlerFactories(
  importModule: (url: URL) => Promise<unknown> = (url) => import(url.href),
): Promise<ReadonlyMap<RouteFunctionName, RouteHandlerFactory>> {
  const loaded = await Promise.all(
    routeFunctionNames.map(async (name) => {
      const url = new URL(`../${routeFunctionFolder(name)}/create-handler.ts`, import.meta.url);
      const module = (await importModule(url)) as { readonly createHandler: RouteHandlerFactory };
      return [name, module.createHandler] as const;
    }),
  );
  return new Map(loaded);
}
