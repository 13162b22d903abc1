/**
 * The functions as the local API runs them: each route function's `createHandler` (the same code
 * Lambda runs, free of the entry's module-scope effects), found by the route table, and the
 * authorizer's, with the dependencies the local API gives every one of them. They are built from
 * modules an `importModule` brings, so that hot reload can build them again from fresh imports.
 */
import type { AuthorizerConfig } from '../functions/authorizer/config.ts';
import type { AuthorizerOptions } from '../functions/authorizer/create-handler.ts';
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
import type { ProxyIntegrationHandler, TokenAuthorizerHandler } from './api-gateway/gateway.ts';

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

/** Imports a module of the repository by its URL. */
export type ImportModule = (url: URL) => Promise<unknown>;

const importAsIs: ImportModule = (url) => import(url.href);

/** Every route function's `createHandler`, imported by `importModule`. */
export async function loadRouteHandlerFactories(
  importModule: ImportModule = importAsIs,
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

export interface LocalFunctionsOptions {
  /** The dependencies of each route function (its logger names it). */
  readonly dependenciesOf: (name: RouteFunctionName) => RouteFunctionDependencies;
  /** The authorizer's environment, as the stack sets it. */
  readonly authorizerEnvironment: Readonly<Record<string, string>>;
  readonly authorizerOptions: AuthorizerOptions;
}

/** The handlers the local gateway calls: the latest built, swapped whole by a reload. */
export interface LocalFunctions {
  readonly routeHandler: (name: RouteFunctionName) => ProxyIntegrationHandler;
  readonly authorizer: TokenAuthorizerHandler;
  /**
   * Builds every handler again from modules `importModule` brings, and returns what puts them in
   * use; a failure changes nothing.
   */
  prepareReload(importModule: ImportModule): Promise<() => void>;
}

export async function loadLocalFunctions(options: LocalFunctionsOptions): Promise<LocalFunctions> {
  const build = async (importModule: ImportModule) => {
    const [factories, authorizerModule, configModule] = await Promise.all([
      loadRouteHandlerFactories(importModule),
      importModule(new URL('../functions/authorizer/create-handler.ts', import.meta.url)),
      importModule(new URL('../functions/authorizer/config.ts', import.meta.url)),
    ]);
    const { createHandler } = authorizerModule as {
      createHandler: (
        config: AuthorizerConfig,
        options: AuthorizerOptions,
      ) => TokenAuthorizerHandler;
    };
    const { readAuthorizerConfig } = configModule as {
      readAuthorizerConfig: (environment: Record<string, string>) => AuthorizerConfig;
    };
    const handlers = new Map(
      routeFunctionNames.map((name) => [
        name,
        (factories.get(name) as RouteHandlerFactory)(options.dependenciesOf(name)),
      ]),
    );
    const authorizer = createHandler(
      readAuthorizerConfig({ ...options.authorizerEnvironment }),
      options.authorizerOptions,
    );
    return { handlers, authorizer };
  };
  let current = await build(importAsIs);
  return {
    routeHandler: (name) => (event, context) =>
      (current.handlers.get(name) as ProxyIntegrationHandler)(event, context),
    authorizer: (event, context) => current.authorizer(event, context),
    prepareReload: async (importModule) => {
      const built = await build(importModule);
      return () => {
        current = built;
      };
    },
  };
}
