/**
 * The local dispatcher's time of a stream record: AWS's (to the second) where DynamoDB Local
 * gives only the minute.
 */
import { describe, expect, it } from '@jest/globals';
import { timedToTheSecond } from '../../local/plants-stream.ts';

const minute = Date.UTC(2026, 10, 22, 10, 16) / 1000;
const record = (stated: number | Date | undefined) => ({
  eventID: 'e1',
  eventName: 'MODIFY',
  dynamodb: stated === undefined ? {} : { ApproximateCreationDateTime: stated },
});
const timeOf = (stated: number | Date | undefined, now: number) =>
  timedToTheSecond(record(stated), now).dynamodb.ApproximateCreationDateTime;

describe('timedToTheSecond', () => {
  it('takes the second the record is read in, within the minute DynamoDB Local states', () => {
    expect(timeOf(minute, (minute + 7) * 1000 + 420)).toBe(minute + 7);
    expect(timeOf(new Date(minute * 1000), (minute + 7) * 1000)).toBe(minute + 7);
  });

  it('never leaves that minute: a record read late keeps its last second, one read early its first', () => {
    expect(timeOf(minute, (minute + 300) * 1000)).toBe(minute + 59);
    expect(timeOf(minute, (minute - 2) * 1000)).toBe(minute);
  });

  it('keeps a time finer than the minute, or none, as stated', () => {
    expect(timeOf(minute + 13, (minute + 30) * 1000)).toBe(minute + 13);
    expect(timeOf(undefined, (minute + 30) * 1000)).toBeUndefined();
  });
});
