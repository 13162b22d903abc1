import { expect, it } from '@jest/globals';
import {
  replayDue,
  replayPeriodMinutes,
} from '../../../functions/replay-stream-failures/create-handler.ts';

/** The ages at which runs every `period` minutes, starting `offset` minutes in, replay a batch. */
function replays(period: number, offset: number, until = 24 * 60): number[] {
  const ages: number[] = [];
  let triedAt: number | undefined;
  for (let age = offset; age < until; age += period) {
    if (replayDue(age, triedAt)) {
      ages.push(age);
      triedAt = age;
    }
  }
  return ages;
}

it('replays a kept batch once at 5, 10, 20, 40, 80 and 160 minutes, then every 4 hours', () => {
  expect(replays(replayPeriodMinutes, 0)).toEqual([
    5, 10, 20, 40, 80, 160, 240, 480, 720, 960, 1200,
  ]);
  // A first replay: due from 5 minutes, never before.
  expect([replayDue(4), replayDue(5)]).toEqual([false, true]);
});

it('skips no replay point when runs come late or are missed: the next run makes it up', () => {
  // Runs 2 minutes late, or every 15 minutes (two of three missed): still one replay per point
  // passed since the last try, never two for one point.
  for (const [period, offset] of [
    [5, 2],
    [15, 0],
    [7, 3],
  ] as const) {
    const ages = replays(period, offset);
    expect(ages.length).toBeGreaterThanOrEqual(8);
    const points = [5, 10, 20, 40, 80, 160, 240, 480, 720, 960, 1200];
    // Each replay follows at least one point passed since the one before it.
    for (const [index, age] of ages.entries()) {
      const previous = ages[index - 1] ?? -1;
      expect(points.some((point) => point > previous && point <= age)).toBe(true);
    }
    // And every point is covered by a replay at or after it.
    for (const point of points) expect(ages.some((age) => age >= point)).toBe(true);
  }
});
