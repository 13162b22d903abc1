/**
 * JSON parsing that keeps one integer field exact as a `bigint`.
 *
 * `JSON.parse` turns every number into a `number`, which rounds integers above 2^53. The exact
 * value is rebuilt here from the number's source text, found by one pass over the root object,
 * with JSON Schema's idea of an integer: any number without a fractional part (`7`, `7.0`, `7e2`,
 * `700e-2`).
 */

/** The smallest int64: −2^63. */
export const int64Min = -(2n ** 63n);
/** The largest int64: 2^63 − 1. */
export const int64Max = 2n ** 63n - 1n;

/** Digits of 2^63, the most an int64 can have; anything longer is out of range without math. */
const int64MaxDigits = 19;

/** A JSON number's source text: sign, integer digits, fraction digits, exponent. */
const jsonNumberPattern = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/** A JSON number token, after optional JSON white space, where `lastIndex` points. */
const jsonNumberToken = /[ \t\n\r]*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/y;

/**
 * Parses `text` like `JSON.parse`, except that `key` of the root object, when it is a JSON number
 * that is an int64, becomes an exact `bigint`. Every other value is left as `JSON.parse` makes it,
 * so a fractional or out-of-range number stays a `number` for the schema to reject. Nested objects'
 * `key` fields are not touched.
 *
 * @throws SyntaxError when `text` is not JSON.
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
 * The source text of the number that is the last `key` member of the root object of `text` (which
 * `JSON.parse` has accepted, so its structure can be trusted), as `JSON.parse` keeps the last of
 * duplicate keys. A single loop rather than a `JSON.parse` reviver, whose walk recurses and runs
 * out of stack near 2,500 levels of nesting: a 16 KiB body can nest 8,000 deep in a field the API
 * ignores, and must still be read.
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
      // Keys may be escaped (`"\u0069d"` is `id`): let JSON.parse read those; a plain key is
      // its text (thousands of JSON.parse calls for a body of many short keys cost 20 times more).
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

/**
 * The exact int64 value of a JSON number's source text, or `undefined` when it has a fractional
 * part or lies outside −2^63 … 2^63−1. Never builds a huge `bigint` (think `1e999999999`).
 */
export function parseInt64(source: string): bigint | undefined {
  const match = jsonNumberPattern.exec(source);
  if (match === null) return undefined;
  const [, sign = '', integerDigits = '', fractionDigits = '', exponentText = '0'] = match;
  const allDigits = integerDigits + fractionDigits;
  const significant = allDigits.replace(/^0+/, '');
  if (significant === '') return 0n; // 0, -0, 0.000, 0e99999
  const leadingZeros = allDigits.length - significant.length;
  const digits = withoutTrailingZeros(significant);
  // Where the decimal point sits, counted in digits from the left of `digits`. An exponent too
  // long for a safe integer is clamped: it is out of range or fractional either way.
  const exponent = Math.max(-1e15, Math.min(1e15, Number(exponentText)));
  const pointPosition = integerDigits.length - leadingZeros + exponent;
  if (pointPosition < digits.length) return undefined; // a fractional part remains
  if (pointPosition > int64MaxDigits) return undefined;
  const magnitude = BigInt(digits + '0'.repeat(pointPosition - digits.length));
  const value = sign === '-' ? -magnitude : magnitude;
  return value < int64Min || value > int64Max ? undefined : value;
}

/**
 * `text` without its trailing zeros. A loop, not `replace(/0+$/, '')`: that regular expression
 * tries every run of zeros to the end of the text, quadratic in a long run of `0…01` digits.
 */
function withoutTrailingZeros(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 48 /* 0 */) end--;
  return text.slice(0, end);
}

/** Decimal digits with an optional leading minus, as a path parameter carries an int64. */
const decimalIntegerPattern = /^-?[0-9]+$/;

/**
 * The int64 written in `text` as decimal digits with an optional leading minus (`42`, `-7`,
 * `007`), or `undefined` for anything else or a value outside −2^63 … 2^63−1.
 */
export function parseDecimalInt64(text: string): bigint | undefined {
  // A subset of the JSON number forms parseInt64 reads exactly (leading zeros, -0 included).
  return decimalIntegerPattern.test(text) ? parseInt64(text) : undefined;
}
