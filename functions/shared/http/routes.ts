/**
 * The one route table: method, path, scope and function of every operation, for the CDK app,
 * `npm start` and the authorizer's policy; tested against `openapi.yaml`. Plain data.
 */

/** The OAuth scopes of the API: `<resource server>/<scope>`, as Cognito names them. */
export const scopes = {
  read: 'plants/read',
  write: 'plants/write',
  manageWebhooks: 'webhooks/manage',
} as const;

export type Scope = (typeof scopes)[keyof typeof scopes];

/** What each scope lets a client do, for the issuer's resource server and the docs. */
export const scopeDescriptions: Readonly<Record<Scope, string>> = {
  'plants/read': 'List and read plants, and hear of them at a webhook endpoint',
  'plants/write': 'Create, change and delete plants',
  'webhooks/manage':
    "Manage the client's own webhook endpoints (creating, changing or recovering one needs plants/read too)",
};

export interface Route {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The resource path as API Gateway writes it, path parameters in braces: `/plants/{id}`. */
  readonly path: string;
  /** The scopes a token must grant, every one of them. */
  readonly scopes: readonly Scope[];
  /** camelCase; its folder is kebab-case (`updatePlant` → `functions/update-plant/`). */
  readonly function: string;
  /** The OpenAPI `operationId`; the function's name unless one function serves two routes. */
  readonly operationId: string;
}

const manage = [scopes.manageWebhooks] as const;
// Routes that can point an endpoint at plant events (a PATCH may) need plants/read too.
const manageAndRead = [scopes.manageWebhooks, scopes.read] as const;

export const routes = routeTable([
  ['POST', '/plants', [scopes.write], 'createPlant'],
  ['GET', '/plants', [scopes.read], 'listPlants'],
  ['GET', '/plants/{id}', [scopes.read], 'getPlant'],
  ['PUT', '/plants/{id}', [scopes.write], 'updatePlant', 'replacePlant'],
  ['PATCH', '/plants/{id}', [scopes.write], 'updatePlant', 'patchPlant'],
  ['DELETE', '/plants/{id}', [scopes.write], 'deletePlant'],
  ['POST', '/webhook-endpoints', manageAndRead, 'createWebhookEndpoint'],
  ['GET', '/webhook-endpoints', manage, 'listWebhookEndpoints'],
  ['GET', '/webhook-endpoints/{endpointId}', manage, 'getWebhookEndpoint'],
  ['PATCH', '/webhook-endpoints/{endpointId}', manageAndRead, 'updateWebhookEndpoint'],
  ['DELETE', '/webhook-endpoints/{endpointId}', manage, 'deleteWebhookEndpoint'],
  ['GET', '/webhook-endpoints/{endpointId}/secret', manage, 'getWebhookEndpointSecret'],
  ['POST', '/webhook-endpoints/{endpointId}/secret/rotate', manage, 'rotateWebhookEndpointSecret'],
  ['POST', '/webhook-endpoints/{endpointId}/test', manage, 'testWebhookEndpoint'],
  ['GET', '/webhook-endpoints/{endpointId}/attempts', manage, 'listWebhookEndpointAttempts'],
  ['POST', '/webhook-endpoints/{endpointId}/recover', manageAndRead, 'recoverWebhookEndpoint'],
]) satisfies readonly Route[];

/** A row: method, path, scopes, function, and `operationId` where not the function's name. */
type RouteRow = readonly [Route['method'], string, readonly Scope[], string, string?];

function routeTable<const Rows extends readonly RouteRow[]>(rows: Rows) {
  return rows.map(([method, path, routeScopes, name, operationId = name]) => ({
    method,
    path,
    scopes: [...routeScopes],
    function: name,
    operationId,
  })) as {
    [Index in keyof Rows]: {
      readonly method: Rows[Index][0];
      readonly path: Rows[Index][1];
      readonly scopes: readonly Scope[];
      readonly function: Rows[Index][3];
      readonly operationId: string;
    };
  };
}

/** Whether a token granting `granted` may call the route: it grants every scope the route needs. */
export function grantsRoute(granted: readonly string[], route: Pick<Route, 'scopes'>): boolean {
  return route.scopes.every((scope) => granted.includes(scope));
}

/** The functions behind the routes (keys of `infra/function-settings.ts`). */
export type RouteFunctionName = (typeof routes)[number]['function'];

/** Every function behind a route, once each, in the table's order. */
export const routeFunctionNames: readonly RouteFunctionName[] = [
  ...new Set(routes.map((route) => route.function)),
];

/** The function behind a route (the bench and the cost model name routes). @throws Error */
export function routeFunctionOf(method: Route['method'], path: string): RouteFunctionName {
  const route = routes.find((entry) => entry.method === method && entry.path === path);
  if (route === undefined) throw new Error(`No route ${method} ${path} in the route table.`);
  return route.function;
}

/** The routes a function serves. */
export function routesOf(name: RouteFunctionName): readonly Route[] {
  return routes.filter((route) => route.function === name);
}

/** A route function's folder, relative to the repository root: `functions/update-plant`. */
export function routeFunctionFolder(name: RouteFunctionName): string {
  return `functions/${functionDisplayName(name)}`;
}

/** A route as an authorizer policy's resource: `POST/plants`, `GET/plants/*`. */
export function routeResource(route: Route): string {
  return `${route.method}${route.path.replace(/\{[^/}]+\}/g, '*')}`;
}

/** A function's name in logs and alarms: `createPlant` (or `CreatePlant`) → `create-plant`. */
export function functionDisplayName(name: string): string {
  return name.replace(/[A-Z]/g, (letter, index: number) =>
    index === 0 ? letter.toLowerCase() : `-${letter.toLowerCase()}`,
  );
}
