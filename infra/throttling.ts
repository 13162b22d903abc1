/**
 * A stage's throttling budget, split among its methods. API Gateway applies a stage's throttling
 * (`*\/*` method settings) to each method on its own: "Per-API, per-stage throttling limits are
 * applied at the API method level for a stage" (API Gateway developer guide, "Throttle requests
 * to your REST APIs for better throughput"). With six methods, a stage set to 200/s would admit
 * 1,200/s. So every route of the route table gets an equal share, and together they never pass
 * the budget the stage config names.
 *
 * Plain data: the local stand-in throttles with it too.
 */
import { routes } from '../functions/shared/routes.ts';

/** A token bucket: refilled at `rateLimit` per second, holding `burstLimit`. */
export interface ThrottlingLimits {
  readonly rateLimit: number;
  readonly burstLimit: number;
}

/** Each method's limits: the budget divided by the routes, a burst of at least one. */
export function methodThrottling(
  budget: ThrottlingLimits,
  methods: number = routes.length,
): ThrottlingLimits {
  return {
    rateLimit: budget.rateLimit / methods,
    burstLimit: Math.max(1, Math.floor(budget.burstLimit / methods)),
  };
}
