/**
 * The time an invocation may still spend on its work: Lambda's `getRemainingTimeInMillis()` less a
 * margin kept for what follows (releasing what the work took, writing the answer). Every store
 * call and control-plane call is bounded by it, so a slow dependency ends in a 503, or the
 * authorizer's fallback, before Lambda's timeout, never in API Gateway's 500.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

interface Budget {
  /** When the work must stop, in milliseconds since the epoch. */
  readonly endsAt: number;
  readonly marginMilliseconds: number;
}

const budgets = new AsyncLocalStorage<Budget>();

/** What Lambda's context tells of the time left (absent in tests and under `npm start`'s tools). */
export interface RemainingTime {
  getRemainingTimeInMillis?(): number;
}

/** Runs `work` within `context`'s remaining time less `marginMilliseconds`. */
export function withinInvocationBudget<Result>(
  context: RemainingTime | undefined,
  marginMilliseconds: number,
  work: () => Promise<Result>,
): Promise<Result> {
  const remaining = context?.getRemainingTimeInMillis?.();
  // No time told: no budget, not even one a caller's invocation left in this async context
  // (`npm start` runs many invocations, and background work, in one process).
  if (remaining === undefined) return budgets.exit(work);
  const endsAt = Date.now() + remaining - marginMilliseconds;
  return budgets.run({ endsAt, marginMilliseconds }, work);
}

/** Milliseconds left for work in this invocation; `Infinity` outside a budget. */
export function remainingBudget(): number {
  const budget = budgets.getStore();
  return budget === undefined ? Number.POSITIVE_INFINITY : budget.endsAt - Date.now();
}

/** Runs `cleanup` on the margin the work left: bounded by the invocation's end, not the work's. */
export function onMargin<Result>(cleanup: () => Promise<Result>): Promise<Result> {
  const budget = budgets.getStore();
  if (budget === undefined) return cleanup();
  // Half a second is kept for the answer itself.
  const endsAt = budget.endsAt + budget.marginMilliseconds - 500;
  return budgets.run({ endsAt, marginMilliseconds: 0 }, cleanup);
}

/** What the queue-fed and scheduled functions keep of their time for what follows their work. */
export const backgroundMarginMilliseconds = 3_000;

/** `handler`, each invocation within its own budget (`withinInvocationBudget`). */
export function budgeted<Args extends [unknown?, RemainingTime?], Result>(
  marginMilliseconds: number,
  handler: (...args: Args) => Promise<Result>,
): (...args: Args) => Promise<Result> {
  return (...args: Args) =>
    withinInvocationBudget(args[1], marginMilliseconds, () => handler(...args));
}
