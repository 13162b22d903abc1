import { describe, expect, it, jest } from '@jest/globals';
import {
  entityTagOf,
  matchesWeakly,
  maxVersion,
  nextVersion,
  parseEntityTagList,
  readItemVersion,
  versionClock,
  versionsMatchedBy,
} from '../../../../functions/shared/http/entity-version.ts';

describe('plant versions', () => {
  it('take the clock, or one more than the last when the clock has not passed it', () => {
    expect(nextVersion(0, 1_795_000_000_000)).toBe(1_795_000_000_000);
    expect(nextVersion(1_795_000_000_000, 1_795_000_000_000)).toBe(1_795_000_000_001);
    expect(nextVersion(1_795_000_000_500, 1_795_000_000_000)).toBe(1_795_000_000_501);
  });

  it('are read from items: none is 0, anything but a whole safe number is not ours', () => {
    expect(readItemVersion({})).toBe(0);
    expect(readItemVersion({ version: { value: '1795000000000' } })).toBe(1_795_000_000_000);
    for (const value of ['1.5', '-1', '01', '9007199254740993', 'x']) {
      expect([value, readItemVersion({ version: { value } })]).toEqual([value, undefined]);
    }
    expect(readItemVersion({ version: 'text' })).toBeUndefined();
  });

  it('are read from the wall clock, in microseconds: set back or forward, it is followed at once', () => {
    const before = Date.now() * 1000;
    const reading = versionClock();
    expect(reading).toBeGreaterThanOrEqual(before);
    expect(reading).toBeLessThanOrEqual((Date.now() + 1) * 1000);
    for (const step of [-60_000, 60_000]) {
      const stepped = Date.now() + step;
      const now = jest.spyOn(Date, 'now').mockReturnValue(stepped);
      try {
        expect(versionClock()).toBe(stepped * 1000);
      } finally {
        now.mockRestore();
      }
    }
  });

  it('leave room for a thousand changes within one millisecond of the clock', () => {
    let version = nextVersion(0, 1_795_000_000_000_000);
    for (let change = 1; change < 1000; change += 1) {
      version = nextVersion(version, 1_795_000_000_000_000);
    }
    expect(version).toBe(1_795_000_000_000_999);
    expect(nextVersion(version, 1_795_000_000_001_000)).toBe(1_795_000_000_001_000);
  });

  it('stop at 2^53 − 2: every version and the one after it are exact', () => {
    expect(maxVersion).toBe(2 ** 53 - 2);
    expect(readItemVersion({ version: { value: String(maxVersion) } })).toBe(maxVersion);
    expect(readItemVersion({ version: { value: String(maxVersion + 1) } })).toBeUndefined();
  });

  it('make strong entity tags', () => {
    expect(entityTagOf(1_795_000_000_000)).toBe('"1795000000000"');
  });
});

describe('If-Match and If-None-Match lists', () => {
  it('read *, one tag, several, weak ones, and tags that are not ours', () => {
    expect(parseEntityTagList(' * ')).toEqual({ any: true });
    expect(parseEntityTagList('"5", W/"6",  "x"')).toEqual({
      any: false,
      tags: [
        { weak: false, version: 5 },
        { weak: true, version: 6 },
        { weak: false, version: undefined },
      ],
    });
  });

  it('read a comma inside a tag as part of it, and empty members as nothing', () => {
    expect(parseEntityTagList('"a,b", "7"')).toEqual({
      any: false,
      tags: [
        { weak: false, version: undefined },
        { weak: false, version: 7 },
      ],
    });
    expect(versionsMatchedBy(parseEntityTagList(', "7",, '))).toEqual([7]);
    expect(matchesWeakly(parseEntityTagList('W/"x,y", "7"'), 7)).toBe(true);
  });

  it('name no version past the last whose successor is exact (2^53 − 2)', () => {
    expect(versionsMatchedBy(parseEntityTagList('"9007199254740990"'))).toEqual([
      9_007_199_254_740_990,
    ]);
    expect(versionsMatchedBy(parseEntityTagList('"9007199254740991"'))).toEqual([]);
  });

  it('match nothing when the list is not valid (an unquoted tag, a lower-case w/)', () => {
    for (const header of ['5', '"5", 6', 'w/"5"', '"5', '"a"b"']) {
      expect([header, versionsMatchedBy(parseEntityTagList(header))]).toEqual([header, []]);
    }
  });

  it('compare strongly for If-Match and weakly for If-None-Match', () => {
    expect(versionsMatchedBy(parseEntityTagList('W/"5", "6"'))).toEqual([6]);
    expect(versionsMatchedBy(parseEntityTagList('*'))).toBeUndefined();
    expect(matchesWeakly(parseEntityTagList('W/"5"'), 5)).toBe(true);
    expect(matchesWeakly(parseEntityTagList('"4", "5"'), 5)).toBe(true);
    expect(matchesWeakly(parseEntityTagList('"4"'), 5)).toBe(false);
    expect(matchesWeakly(parseEntityTagList('*'), 5)).toBe(true);
  });
});
