import { describe, expect, it } from '@jest/globals';
import { seededRandom } from '../../bench/statistics.ts';
import { planFaults } from './fault-plan.ts';

describe('a fault plan', () => {
  it('is the same for the same seed, and another for another seed', () => {
    expect(planFaults(42, 60, 3, 200)).toEqual(planFaults(42, 60, 3, 200));
    expect(planFaults(42, 60, 3, 200)).not.toEqual(planFaults(43, 60, 3, 200));
  });

  it('has every kind of fault within the run, ordered in time', () => {
    const { faults } = planFaults(7, 600, 3, 0);
    expect(new Set(faults.map((fault) => fault.kind))).toEqual(
      new Set(['pause-store', 'slow-store', 'refuse-queue', 'hang-receiver', 'kill']),
    );
    const times = faults.map((fault) => fault.at);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(Math.max(...times)).toBeLessThan(600_000);
  });

  it('draws numbers spread over [0, 1)', () => {
    const random = seededRandom(1);
    const draws = Array.from({ length: 10_000 }, random);
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...draws)).toBeLessThan(1);
    const low = draws.filter((draw) => draw < 0.5).length;
    expect(low).toBeGreaterThan(4_700);
    expect(low).toBeLessThan(5_300);
  });
});
