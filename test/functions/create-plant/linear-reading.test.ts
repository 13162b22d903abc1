/**
 * Reading a body costs time linear in its size. Each pathological body of 16 KiB (the largest
 * accepted) is timed against an ordinary body of the same size in the same run: a quadratic step
 * (a regular expression that retries from every position, say) makes the ratio hundreds.
 */
import { describe, expect, it } from '@jest/globals';
import { readNewPlant } from '../../../functions/create-plant/read-new-plant.ts';
import { createPostPlantsEvent } from '../../support/api-gateway-event.ts';

const size = 16 * 1024;

/** The body `make(n)` for the largest filler length `n` that keeps it within `size` bytes. */
function filled(make: (fillerLength: number) => string, unit = 1): string {
  const fixed = make(0).length;
  return make(Math.floor((size - fixed) / unit));
}

/** CPU time of reading `body` `rounds` times, in milliseconds (the fastest of three tries). */
function timeReading(body: string, rounds: number): number {
  const event = createPostPlantsEvent({ body });
  let best = Number.POSITIVE_INFINITY;
  for (let attempt = 0; attempt < 3; attempt++) {
    const started = process.cpuUsage();
    for (let round = 0; round < rounds; round++) {
      try {
        readNewPlant(event);
      } catch {
        // Rejected bodies count too: rejecting must be as quick.
      }
    }
    const used = process.cpuUsage(started);
    best = Math.min(best, (used.user + used.system) / 1000);
  }
  return best;
}

const ordinary = filled((n) => `{"id":1,"name":"${'x'.repeat(n)}"}`);

const pathological: [string, string][] = [
  ['an id of zeros between ones', filled((n) => `{"id":1${'0'.repeat(n)}1,"name":"a"}`)],
  ['an id of zeros then a one', filled((n) => `{"id":${'0'.repeat(n)}1,"name":"a"}`)],
  ['an id with a long fraction', filled((n) => `{"id":1.${'0'.repeat(n)}1,"name":"a"}`)],
  ['an id with a long exponent', filled((n) => `{"id":1e${'9'.repeat(n)},"name":"a"}`)],
  ['a name of escaped backslashes', filled((n) => `{"id":1,"name":"${'\\\\'.repeat(n)}"}`, 2)],
  [
    'deep nesting in an ignored field',
    filled((n) => `{"id":1,"x":${'['.repeat(n)}${']'.repeat(n)}}`, 2),
  ],
  ['many members named id', filled((n) => `{${'"id":1,'.repeat(n)}"name":"a"}`, 7)],
];

describe('reading a body', () => {
  it.each(pathological)(
    'costs about what an ordinary body of the same size costs: %s',
    (_name, body) => {
      expect(Buffer.byteLength(body)).toBeLessThanOrEqual(size);
      const rounds = 40;
      // Interleaved, so both see the same machine load.
      const baseline = timeReading(ordinary, rounds);
      const measured = timeReading(body, rounds);
      const again = timeReading(ordinary, rounds);
      const ratio = measured / Math.max(Math.min(baseline, again), 0.05);
      expect({ ratio: Math.round(ratio), below: ratio < 25 }).toEqual({
        ratio: Math.round(ratio),
        below: true,
      });
    },
  );
});
