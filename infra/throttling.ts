/**
 * A stage's throttling budgets, split among its methods. API Gateway applies a stage's throttling
 * (`*\/*` method settings) to each method on its own: "Per-API, per-stage throttling limits are
 * applied at the API method level for a stage" (API Gateway developer guide, "Throttle requests
 * to your REST APIs for better throughput"). With six methods, a stage set to 200/s would admit
 * 1,200/s. So the plants' routes share the stage's budget equally, the webhook endpoint routes
 * share a budget of their own, and together each group never passes the budget it is given.
 *
 * Plain data: the local stand-in throttles with it too.
 */
import { errorBody, gatewayErrorCodes } from '../functions/shared/errors/error-codes.ts';
import { type Route, routes } from '../functions/shared/http/routes.ts';

/** A token bucket: refilled at `rateLimit` per second, holding `burstLimit`. */
export interface ThrottlingLimits {
  readonly rateLimit: number;
  readonly burstLimit: number;
}

/**
 * The webhook endpoint routes' budget when a stage names none: 20 requests per second, bursts
 * of 40, so 2/s and bursts of 4 for each of the ten routes. Registering, rotating and checking
 * endpoints is rare work; a client doing it in a loop is stopped long before it costs much.
 */
export const defaultEndpointThrottling: ThrottlingLimits = { rateLimit: 20, burstLimit: 40 };

/** Each method's limits: the budget divided by the routes, a burst of at least one. */
export function methodThrottling(budget: ThrottlingLimits, methods: number): ThrottlingLimits {
  return {
    rateLimit: budget.rateLimit / methods,
    burstLimit: Math.max(1, Math.floor(budget.burstLimit / methods)),
  };
}

/** Whether a route is one of the webhook endpoint routes (their budget) or a plants route. */
export function isEndpointRoute(route: Pick<Route, 'path'>): boolean {
  return route.path.startsWith('/webhook-endpoints');
}

/** A route's limits: its share of its group's budget. */
export function routeThrottling(
  route: Pick<Route, 'path'>,
  budgets: { readonly plants: ThrottlingLimits; readonly webhookEndpoints?: ThrottlingLimits },
): ThrottlingLimits {
  const endpoints = isEndpointRoute(route);
  const group = routes.filter((candidate) => isEndpointRoute(candidate) === endpoints);
  return methodThrottling(
    endpoints ? (budgets.webhookEndpoints ?? defaultEndpointThrottling) : budgets.plants,
    group.length,
  );
}

/**
 * Each client's limits on a route, which the stage's usage plan keeps per API key (one key per
 * client, `functions/authorizer/client-keys.ts`): half the method's share, so one client, however
 * many tokens it mints, never takes a whole method's bucket from the others.
 */
export function clientThrottling(
  route: Pick<Route, 'path'>,
  budgets: Parameters<typeof routeThrottling>[1],
): ThrottlingLimits {
  const share = routeThrottling(route, budgets);
  return {
    rateLimit: share.rateLimit / 2,
    burstLimit: Math.max(1, Math.floor(share.burstLimit / 2)),
  };
}

/**
 * Per-token limits, which the stage's web ACL enforces before API Gateway (AWS WAF rate-based
 * rules, "Rate-based rule high-level settings", AWS WAF Developer Guide): requests in the trailing
 * minute, counted per bearer token (the `Authorization` header is the aggregation key) and per
 * group of routes. A loop on one token, valid or not, is refused there before it costs an
 * authorizer call; a client that mints tokens meets its usage plan limit (`clientThrottling`).
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

/**
 * Each group's per-client limit: half of one of its method's share over the window, so a single
 * client never takes a whole method's rate, however it loops.
 */
export function tokenLimits(budgets: {
  readonly plants: ThrottlingLimits;
  readonly webhookEndpoints?: ThrottlingLimits;
}): readonly TokenLimit[] {
  const limitOf = (path: string) =>
    Math.max(
      lowestWafLimit,
      Math.floor((routeThrottling({ path }, budgets).rateLimit * tokenLimitWindowSeconds) / 2),
    );
  return [
    { group: 'plants', pathContains: '/plants', requestsPerWindow: limitOf('/plants') },
    {
      group: 'webhookEndpoints',
      pathContains: '/webhook-endpoints',
      requestsPerWindow: limitOf('/webhook-endpoints'),
    },
  ];
}

/**
 * The web ACL's answer to a request over its client's limit: a custom response of AWS WAF's
 * own, so no gateway response reshapes it. Browsers may read it only where the stage allows any
 * origin (a custom response's headers are fixed, so it cannot name the request's origin).
 */
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
