import { expect, it } from '@jest/globals';
import {
  replayDue,
  replayPeriodMinutes,
} from '../../../functions/replay-stream-failures/create-handler.ts';

it('replays a kept batch in one 5-minute run at 5, 10, 20, 40, 80 and 160 minutes, then every 4 hours', () => {
  const due = Array.from({ length: 24 * 60 }, (_, age) => age).filter(replayDue);
  const windows = [5, 10, 20, 40, 80, 160, 240, 480, 720, 960, 1200];
  expect(due).toEqual(
    windows.flatMap((start) =>
      Array.from({ length: replayPeriodMinutes }, (_, minute) => start + minute),
    ),
  );
});
