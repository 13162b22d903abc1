/** The contract suite's cases: each run where the target can run it, else listed with why not. */
import { it } from '@jest/globals';
import { type Capability, cannotRun, target } from './target.ts';

/**
 * `it` for a case needing `capabilities`: run where the target has them all, else listed as
 * skipped with the reason in its name.
 */
export function caseNeeding(...capabilities: Capability[]) {
  const reasons = capabilities.map(cannotRun).filter((reason) => reason !== undefined);
  return (name: string, test: () => Promise<void>, timeout?: number) => {
    if (reasons.length === 0) it(name, test, timeout);
    else it.skip(`${name} [not on ${target().name}: ${reasons.join('; ')}]`, test, timeout);
  };
}
