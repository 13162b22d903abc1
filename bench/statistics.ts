/**
 * The few statistics the benchmark reports: medians and 90th percentiles of small samples; and a
 * seeded generator, for an order (or a fault plan) that a run can replay.
 */

/** A sample summarised; times in milliseconds unless the field says otherwise. */
export interface Summary {
  readonly median: number;
  readonly p90: number;
  readonly min: number;
  readonly runs: number;
}

/** The value below which `fraction` of the sorted sample lies (nearest rank). */
export function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) throw new Error('percentile of an empty sample');
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1));
  return sorted[rank] as number;
}

/** Median, p90 and minimum of `values`, rounded to 0.1. */
export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    median: round(percentile(sorted, 0.5)),
    p90: round(percentile(sorted, 0.9)),
    min: round(sorted[0] as number),
    runs: sorted.length,
  };
}

/** Rounds to `digits` decimals (0.1 by default): the benchmark's noise is far above that. */
export function round(value: number, digits = 1): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** mulberry32: a small, well-mixed 32-bit generator, enough to replay a run. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = state;
    mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296;
  };
}
