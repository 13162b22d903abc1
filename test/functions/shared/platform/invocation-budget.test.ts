/**
 * An invocation's budget is its own: work started during one invocation and run after it (as
 * `npm start`'s pollers are) carries no budget into the invocations it makes.
 */
import { expect, it } from '@jest/globals';
import {
  budgeted,
  remainingBudget,
  withinInvocationBudget,
} from '../../../../functions/shared/platform/invocation-budget.ts';

it('gives a handler invoked without a time no budget, even from inside another invocation', async () => {
  const seen: number[] = [];
  const background = budgeted(
    3_000,
    async (
      _event: unknown,
      _context?: { awsRequestId: string; getRemainingTimeInMillis?(): number },
    ) => {
      seen.push(remainingBudget());
    },
  );
  let started: Promise<void> | undefined;
  // An invocation with 3.1 s left (0.1 s of budget) starts background work, then ends.
  await withinInvocationBudget({ getRemainingTimeInMillis: () => 3_100 }, 3_000, async () => {
    seen.push(remainingBudget());
    started = new Promise((resolve) => setTimeout(resolve, 300)).then(() =>
      background({}, { awsRequestId: 'polled' }),
    );
  });
  await started;
  expect(seen[0]).toBeLessThanOrEqual(100);
  expect(seen[1]).toBe(Number.POSITIVE_INFINITY);
});
