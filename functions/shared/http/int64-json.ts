/**
 * JSON parsing that keeps one integer field exact as a `bigint` (`JSON.parse` rounds integers
 * above 2^53), with JSON Schema's idea of an integer: `7`, `7.0`, `7e2`, `700e-2`.
 */

export const int64Min = -(2n ** 63n);
export const int64Max = 2n ** 63n - 1n;

/** Digits of 2^63: anything longer is out of range. */
const int64MaxDigits = 19;
const jsonNumberPattern = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;
/** A JSON number token after JSON white space, at `lastIndex`. */
const jsonNumberToken = /[ \t\n\r]*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/y;

/**
 * `JSON.parse`, except that the root object's `key`, when an int64, becomes an exact `bigint`;
 * any other number stays a `number` for the schema to reject. @throws SyntaxError
 */
export function parseJsonWithInt64(text: string, key: string): unknown {
  const value: unknown = JSON.parse(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const root = value as Record<string, unknown>;
  if (!Object.hasOwn(root, key) || typeof root[key] !== 'number') return value;
  const source = findRootMemberSource(text, key);
  const exact = source === undefined ? undefined : parseInt64(source);
  if (exact !== undefined) root[key] = exact;
  return value;
}

/**
 * The source text of the last `key` number of the root object (as `JSON.parse` keeps the last).
 * A loop, not a reviver: its recursion overflows near 2,500 levels, and 16 KiB can nest 8,000.
 */
function findRootMemberSource(text: string, key: string): string | undefined {
  let depth = 0;
  let expectingKey = false;
  let memberKey: unknown;
  let source: string | undefined;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (char === '"') {
      const end = endOfString(text, index);
      // A plain key is its text (a JSON.parse per key costs 20 times more); an escaped one
      // (`"\u0069d"`) is left to JSON.parse.
      if (depth === 1 && expectingKey) {
        const raw = text.slice(index + 1, end);
        memberKey = raw.includes('\\') ? JSON.parse(text.slice(index, end + 1)) : raw;
      }
      expectingKey = false;
      index = end;
    } else if (char === '{' || char === '[') {
      depth++;
      expectingKey = depth === 1;
    } else if (char === '}' || char === ']') {
      depth--;
    } else if (depth === 1 && char === ',') {
      expectingKey = true;
    } else if (depth === 1 && char === ':' && memberKey === key) {
      jsonNumberToken.lastIndex = index + 1;
      source = jsonNumberToken.exec(text)?.[1] ?? source;
    }
  }
  return source;
}

/** The index of the quote that closes the string opening at `start`. */
function endOfString(text: string, start: number): number {
  let index = start + 1;
  while (text[index] !== '"') index += text[index] === '\\' ? 2 : 1;
  return index;
}

/** The exact int64 of a JSON number's text, or `undefined`; never builds a huge `bigint`. */
export function parseInt64(source: string): bigint | undefined {
  const match = jsonNumberPattern.exec(source);
  if (match === null) return undefined;
  const [, sign = '', integerDigits = '', fractionDigits = '', exponentText = '0'] = match;
  const allDigits = integerDigits + fractionDigits;
  const significant = allDigits.replace(/^0+/, '');
  if (significant === '') return 0n; // 0, -0, 0.000, 0e99999
  const leadingZeros = allDigits.length - significant.length;
  const digits = withoutTrailingZeros(significant);
  // The decimal point's place in `digits`; a huge exponent is clamped (out of range either way).
  const exponent = Math.max(-1e15, Math.min(1e15, Number(exponentText)));
  const pointPosition = integerDigits.length - leadingZeros + exponent;
  if (pointPosition < digits.length) return undefined; // a fractional part remains
  if (pointPosition > int64MaxDigits) return undefined;
  const magnitude = BigInt(digits + '0'.repeat(pointPosition - digits.length));
  const value = sign === '-' ? -magnitude : magnitude;
  return value < int64Min || value > int64Max ? undefined : value;
}

/** `text` without trailing zeros; `/0+$/` would be quadratic in a long run of `0…01`. */
function withoutTrailingZeros(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 48 /* 0 */) end--;
  return text.slice(0, end);
}

/** The int64 in decimal digits with an optional minus (`42`, `-7`, `007`), else `undefined`. */
export function parseDecimalInt64(text: string): bigint | undefined {
  return /^-?[0-9]+$/.test(text) ? parseInt64(text) : undefined;
}
