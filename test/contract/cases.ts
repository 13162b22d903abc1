/** The contract suite's cases: each run where the target can run it, else listed with why not. */
import { it } from '@jest/globals';
import { type Capability, cannotRun, target } from './target.ts';

/**
 * `it` for a case needing `capabilities`: run where the target has them all, else listed as
 * skipped with the reason in its name.
 */
export function caseNeeding(...capabilities: Capability[]) {
  return caseUnless(undefined, ...capabilities);
}

/**
 * {@link caseNeeding}, also listed as skipped when `reason` says why the target cannot run it
 * now (an id the case needs that another's plant has: the suite never deletes what it did not
 * make).
 */
export function caseUnless(reason: string | undefined, ...capabilities: Capability[]) {
  const reasons = [...capabilities.map(cannotRun), reason].filter((unmet) => unmet !== undefined);
  return (name: string, test: () => Promise<void>, timeout?: number) => {
    if (reasons.length === 0) it(name, test, timeout);
    else it.skip(`${name} [not on ${target().name}: ${reasons.join('; ')}]`, test, timeout);
  };
}
