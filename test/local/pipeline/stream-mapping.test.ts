/**
 * A stream record as the local mapping hands it to the fan-out: Lambda's shape (the stream's ARN,
 * the time in seconds), and AWS's time to the second where DynamoDB Local gives only the minute.
 */
import type { _Record } from '@aws-sdk/client-dynamodb-streams';
import { describe, expect, it } from '@jest/globals';
import { lambdaRecordOf } from '../../../local/pipeline/stream-mapping.ts';

const streamArn = 'arn:aws:dynamodb:ddblocal:000000000000:table/plants/stream/2026-11-22T10:16:00';
const minute = Date.UTC(2026, 10, 22, 10, 16) / 1000;
const record = (stated: number | Date | undefined): _Record =>
  ({
    eventID: 'e1',
    eventName: 'MODIFY',
    dynamodb: stated === undefined ? {} : { ApproximateCreationDateTime: stated },
  }) as _Record;
const timeOf = (stated: number | Date | undefined, now: number) =>
  lambdaRecordOf(record(stated), { streamArn }, now).dynamodb?.ApproximateCreationDateTime;

describe('lambdaRecordOf', () => {
  it('takes the second the record is read in, within the minute DynamoDB Local states', () => {
    expect(timeOf(minute, (minute + 7) * 1000 + 420)).toBe(minute + 7);
    expect(timeOf(new Date(minute * 1000), (minute + 7) * 1000)).toBe(minute + 7);
  });

  it('never leaves that minute: a record read late keeps its last second, one read early its first', () => {
    expect(timeOf(minute, (minute + 300) * 1000)).toBe(minute + 59);
    expect(timeOf(minute, (minute - 2) * 1000)).toBe(minute);
  });

  it('keeps a time finer than the minute as stated, in seconds as Lambda gives it, or none', () => {
    expect(timeOf(minute + 13, (minute + 30) * 1000)).toBe(minute + 13);
    expect(timeOf(new Date((minute + 13) * 1000), (minute + 30) * 1000)).toBe(minute + 13);
    expect(timeOf(undefined, (minute + 30) * 1000)).toBeUndefined();
  });

  it('names the stream, as Lambda does (eventSourceARN), and keeps the rest', () => {
    const handed = lambdaRecordOf(record(minute), { streamArn }, minute * 1000);
    expect(handed).toMatchObject({ eventID: 'e1', eventName: 'MODIFY', eventSourceARN: streamArn });
  });
});
