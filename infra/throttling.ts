/**
 * A stage's throttling budgets, split among its methods: API Gateway applies a stage's limits to
 * each method on its own ("Throttle requests to your REST APIs for better throughput"), so six
 * methods at 200/s would admit 1,200/s. The plants budget goes by a declared mix, the endpoints'
 * evenly. Plain data: `npm start` throttles with it too.
 */
import { errorBody, gatewayErrorCodes } from '../functions/shared/errors/error-codes.ts';
import { type Route, routes } from '../functions/shared/http/routes.ts';

/** A token bucket: refilled at `rateLimit` per second, holding `burstLimit`. */
export interface ThrottlingLimits {
  readonly rateLimit: number;
  readonly burstLimit: number;
}

/** The endpoint routes' budget when a stage names none (2/s, bursts of 4, a route): rare work. */
export const defaultEndpointThrottling: ThrottlingLimits = { rateLimit: 20, burstLimit: 40 };

/** Each method's limits: the budget divided by the routes, a burst of at least one. */
export function methodThrottling(budget: ThrottlingLimits, methods: number): ThrottlingLimits {
  return {
    rateLimit: budget.rateLimit / methods,
    burstLimit: Math.max(1, Math.floor(budget.burstLimit / methods)),
  };
}

/**
 * Each plants route's share of the plants budget, together 1: a read-heavy API, the two reads 30 %
 * each, each write 10 %. Traffic of another shape re-declares it (docs/capacity.md).
 */
export const plantsRouteShares: Readonly<Record<string, number>> = {
  'GET /plants/{id}': 0.3,
  'GET /plants': 0.3,
  'POST /plants': 0.1,
  'PATCH /plants/{id}': 0.1,
  'PUT /plants/{id}': 0.1,
  'DELETE /plants/{id}': 0.1,
};

/** Whether a route is one of the webhook endpoint routes (their budget) or a plants route. */
export function isEndpointRoute(route: Pick<Route, 'path'>): boolean {
  return route.path.startsWith('/webhook-endpoints');
}

/** The plants routes' budget, and the webhook endpoint routes' (a default when absent). */
export interface Budgets {
  readonly plants: ThrottlingLimits;
  readonly webhookEndpoints?: ThrottlingLimits;
}

type RouteKey = Pick<Route, 'method' | 'path'>;

/** A route's limits: its share of its group's budget (a plants route's, by the declared mix). */
export function routeThrottling(route: RouteKey, budgets: Budgets): ThrottlingLimits {
  if (!isEndpointRoute(route)) {
    const share = plantsRouteShares[`${route.method} ${route.path}`] ?? 0;
    return {
      rateLimit: budgets.plants.rateLimit * share,
      burstLimit: Math.max(1, Math.floor(budgets.plants.burstLimit * share)),
    };
  }
  return methodThrottling(budgets.webhookEndpoints ?? defaultEndpointThrottling, evenShares(route));
}

/** The routes of a route's group: the even split's divisor. */
function evenShares(route: Pick<Route, 'path'>): number {
  const endpoints = isEndpointRoute(route);
  return routes.filter((candidate) => isEndpointRoute(candidate) === endpoints).length;
}

/** A method no route names (a CORS preflight): an even share of the plants budget. */
export function preflightThrottling(budgets: Budgets): ThrottlingLimits {
  return methodThrottling(budgets.plants, evenShares({ path: '/plants' }));
}

/**
 * Each client's limits on a route, kept per API key by the usage plan: half the method's share,
 * so one client, however many tokens it mints, never takes a method's bucket from the others.
 */
export function clientThrottling(route: RouteKey, budgets: Budgets): ThrottlingLimits {
  return methodThrottling(routeThrottling(route, budgets), 2);
}

/**
 * Per-token limits, counted per `Authorization` header by the stage's web ACL before API Gateway
 * (AWS WAF, "Rate-based rule high-level settings"): a loop on one token costs no authorizer call.
 */
export interface TokenLimit {
  readonly group: 'plants' | 'webhookEndpoints';
  /** The rule's scope: request paths containing this (`/plants`, `/webhook-endpoints`). */
  readonly pathContains: string;
  /** Requests one token may make in a window before the rest are answered 429. */
  readonly requestsPerWindow: number;
}

/** The window AWS WAF counts a rate-based rule's requests over (its shortest). */
export const tokenLimitWindowSeconds = 60;

/** AWS WAF's lowest rate limit for a rate-based rule. */
const lowestWafLimit = 10;

/** A group's per-token limit: half an even share of its budget a window; WAF's lowest at least. */
export function tokenLimits(budgets: Budgets): readonly TokenLimit[] {
  const limitOf = (group: TokenLimit['group'], pathContains: string): TokenLimit => {
    const budget = budgets[group] ?? defaultEndpointThrottling;
    const even = methodThrottling(budget, evenShares({ path: pathContains }));
    const perWindow = Math.floor((even.rateLimit * tokenLimitWindowSeconds) / 2);
    return { group, pathContains, requestsPerWindow: Math.max(lowestWafLimit, perWindow) };
  };
  return [limitOf('plants', '/plants'), limitOf('webhookEndpoints', '/webhook-endpoints')];
}

/** WAF's own 429 (no gateway response reshapes it); only `*` origins can read it in a browser. */
export function tokenLimitResponse(allowedOrigins: readonly string[]) {
  return {
    statusCode: 429,
    headers: {
      'Content-Type': 'application/json',
      'Retry-After': String(tokenLimitWindowSeconds),
      ...(allowedOrigins.includes('*') ? { 'Access-Control-Allow-Origin': '*' } : {}),
    },
    body: JSON.stringify(errorBody(gatewayErrorCodes.tokenThrottled)),
  } as const;
}
