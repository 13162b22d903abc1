import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  int64Max,
  int64Min,
  parseInt64,
  parseJsonWithInt64,
} from '../../../../functions/shared/http/int64-json.ts';

const int64 = fc.bigInt({ min: int64Min, max: int64Max });

/** Other spellings of the same integer that JSON Schema also calls integers. */
function spellings(value: bigint): string[] {
  const sign = value < 0n ? '-' : '';
  const digits = (value < 0n ? -value : value).toString();
  const scientific = `${digits[0]}.${digits.slice(1) || '0'}e${digits.length - 1}`;
  return [
    `${value}`,
    `${value}.0`,
    `${value}.000e0`,
    `${value}E+0`,
    `${value}00e-2`,
    `${sign}${scientific}`,
    `${sign}0.${digits}e${digits.length}`,
  ];
}

describe('parseInt64', () => {
  it('reads every int64, however it is spelled, exactly', () => {
    fc.assert(
      fc.property(int64, (value) => {
        for (const spelling of spellings(value)) expect(parseInt64(spelling)).toBe(value);
      }),
      { numRuns: 200 },
    );
  });

  it('rejects every integer outside the int64 range', () => {
    const outside = fc.oneof(
      fc.bigInt({ min: int64Max + 1n, max: 10n ** 30n }),
      fc.bigInt({ min: -(10n ** 30n), max: int64Min - 1n }),
    );
    fc.assert(
      fc.property(outside, (value) => {
        for (const spelling of spellings(value)) expect(parseInt64(spelling)).toBeUndefined();
      }),
      { numRuns: 200 },
    );
  });

  it('rejects every number with a fractional part', () => {
    fc.assert(
      fc.property(int64, fc.integer({ min: 1, max: 9 }), (value, tenth) => {
        expect(parseInt64(`${value}.${tenth}`)).toBeUndefined();
        expect(parseInt64(`${value}${tenth}e-1`)).toBeUndefined();
      }),
      { numRuns: 200 },
    );
  });

  it.each([
    ['9223372036854775807', int64Max],
    ['-9223372036854775808', int64Min],
    ['0', 0n],
    ['-0', 0n],
    ['0e99999', 0n],
    ['0.0e-99999', 0n],
    ['1e18', 10n ** 18n],
    ['92233720368547758.07e2', int64Max],
  ])('reads %s', (source, value) => {
    expect(parseInt64(source)).toBe(value);
  });

  it.each([
    '9223372036854775808',
    '-9223372036854775809',
    '1e19',
    '1e999999999',
    `1e${'9'.repeat(400)}`,
    '1e-999999999',
    '0.5',
    'NaN',
    '',
  ])('rejects %s without building a huge number', (source) => {
    expect(parseInt64(source)).toBeUndefined();
  });
});

describe('parseJsonWithInt64', () => {
  it('keeps the root id exact and leaves every other number to JSON.parse', () => {
    const parsed = parseJsonWithInt64(
      '{"id": 9007199254740993, "count": 9007199254740993, "nested": {"id": 9007199254740993}, "list": [{"id": 1}]}',
      'id',
    );
    expect(parsed).toEqual({
      id: 9007199254740993n,
      count: 9007199254740992,
      nested: { id: 9007199254740992 },
      list: [{ id: 1 }],
    });
  });

  it('leaves an id that is not an int64 as JSON.parse made it', () => {
    expect(parseJsonWithInt64('{"id": 7.5}', 'id')).toEqual({ id: 7.5 });
    expect(parseJsonWithInt64('{"id": 1e999}', 'id')).toEqual({ id: Number.POSITIVE_INFINITY });
    expect(parseJsonWithInt64('{"id": "7"}', 'id')).toEqual({ id: '7' });
  });

  it('parses non-object roots like JSON.parse', () => {
    expect(parseJsonWithInt64('[1, {"id": 2}]', 'id')).toEqual([1, { id: 2 }]);
    expect(parseJsonWithInt64('7', 'id')).toBe(7);
    expect(parseJsonWithInt64('null', 'id')).toBeNull();
  });

  it('reads the root id however deep the rest of the body nests', () => {
    const deep = `${'['.repeat(8_000)}${']'.repeat(8_000)}`;
    expect(parseJsonWithInt64(`{"ignored": ${deep}, "id": 9007199254740993}`, 'id')).toMatchObject({
      id: 9007199254740993n,
    });
  });

  it('finds the id behind escaped keys, strings that look like JSON, and duplicates', () => {
    const text =
      '{"a": "\\"id\\": 1, {[", "\\u0069d": 9007199254740993, "b": {"id": 2}, "c": [3, {"id": 4}]}';
    expect(parseJsonWithInt64(text, 'id')).toMatchObject({ id: 9007199254740993n, b: { id: 2 } });
    expect(parseJsonWithInt64('{"id": 1, "id": 9007199254740995}', 'id')).toMatchObject({
      id: 9007199254740995n,
    });
    expect(parseJsonWithInt64('{"id": 9007199254740995, "id": "x"}', 'id')).toEqual({ id: 'x' });
  });

  it('throws a SyntaxError on anything that is not JSON', () => {
    expect(() => parseJsonWithInt64('{"id": 01}', 'id')).toThrow(SyntaxError);
    expect(() => parseJsonWithInt64('', 'id')).toThrow(SyntaxError);
  });
});
