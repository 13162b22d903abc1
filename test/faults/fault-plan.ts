/**
 * The faults of one seeded run, decided before it starts: the same seed gives the same faults at
 * the same moments, so a failing run can be replayed (`npm run test:faults -- --seed <seed>`).
 */
import { seededRandom } from '../../bench/statistics.ts';

/** A fault and when it strikes, in milliseconds from the workload's start. */
export type Fault =
  | { readonly at: number; readonly kind: 'pause-store'; readonly milliseconds: number }
  | {
      readonly at: number;
      readonly kind: 'slow-store';
      readonly milliseconds: number;
      readonly delay: number;
    }
  | { readonly at: number; readonly kind: 'refuse-queue'; readonly milliseconds: number }
  | {
      readonly at: number;
      readonly kind: 'hang-receiver';
      readonly milliseconds: number;
      readonly receiver: number;
    }
  | { readonly at: number; readonly kind: 'kill'; readonly restartAfter: number };

/** What the workload does, step by step. */
export type Operation =
  | { readonly kind: 'create' }
  | { readonly kind: 'update' }
  | { readonly kind: 'delete' }
  | { readonly kind: 'describe-endpoint'; readonly endpoint: number }
  | { readonly kind: 'recover'; readonly endpoint: number };

export interface FaultPlan {
  readonly faults: readonly Fault[];
  readonly operations: readonly Operation[];
}

/**
 * The plan for `seconds` of workload: a fault every few seconds (none in the first two, so that
 * the endpoints exist), and `operations` steps of the workload.
 */
export function planFaults(
  seed: number,
  seconds: number,
  receivers: number,
  operations: number,
): FaultPlan {
  const random = seededRandom(seed);
  const between = (low: number, high: number) => Math.floor(low + random() * (high - low));
  const faults: Fault[] = [];
  for (let at = between(2_000, 4_000); at < seconds * 1000; at += between(3_000, 7_000)) {
    const draw = random();
    if (draw < 0.3) faults.push({ at, kind: 'pause-store', milliseconds: between(500, 6_000) });
    else if (draw < 0.45) {
      faults.push({
        at,
        kind: 'slow-store',
        milliseconds: between(1_000, 4_000),
        delay: between(50, 400),
      });
    } else if (draw < 0.65) {
      faults.push({ at, kind: 'refuse-queue', milliseconds: between(500, 4_000) });
    } else if (draw < 0.85) {
      faults.push({
        at,
        kind: 'hang-receiver',
        milliseconds: between(11_000, 14_000),
        receiver: between(0, receivers),
      });
    } else faults.push({ at, kind: 'kill', restartAfter: between(200, 2_000) });
  }
  const steps: Operation[] = [];
  for (let step = 0; step < operations; step += 1) {
    const draw = random();
    if (draw < 0.55) steps.push({ kind: 'create' });
    else if (draw < 0.75) steps.push({ kind: 'update' });
    else if (draw < 0.87) steps.push({ kind: 'delete' });
    else if (draw < 0.96) {
      steps.push({ kind: 'describe-endpoint', endpoint: between(0, receivers) });
    } else steps.push({ kind: 'recover', endpoint: between(0, receivers) });
  }
  return { faults, operations: steps };
}
