/**
 * JSON parsing that keeps one integer field exact as a `bigint`.
 *
 * `JSON.parse` turns every number into a `number`, which rounds integers above 2^53. Since
 * Node.js 21 a reviver also receives the number's source text, from which the exact value is
 * rebuilt here, with JSON Schema's idea of an integer: any number without a fractional part
 * (`7`, `7.0`, `7e2`, `700e-2`).
 */

/** The smallest int64: −2^63. */
export const int64Min = -(2n ** 63n);
/** The largest int64: 2^63 − 1. */
export const int64Max = 2n ** 63n - 1n;

/** Digits of 2^63, the most an int64 can have; anything longer is out of range without math. */
const int64MaxDigits = 19;

/** A JSON number's source text: sign, integer digits, fraction digits, exponent. */
const jsonNumberPattern = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * Parses `text` like `JSON.parse`, except that `key` of the root object, when it is a JSON number
 * that is an int64, becomes an exact `bigint`. Every other value is left as `JSON.parse` makes it,
 * so a fractional or out-of-range number stays a `number` for the schema to reject. Nested objects'
 * `key` fields are not touched.
 *
 * @throws SyntaxError when `text` is not JSON.
 */
export function parseJsonWithInt64(text: string, key: string): unknown {
  // Source texts are recorded per holder object: the reviver runs bottom-up, and only when the
  // root arrives (key '') do we know which holder is the root.
  const sources = new Map<object, string>();
  return JSON.parse(
    text,
    function revive(this: unknown, name, value, context?: { source?: string }) {
      if (name === key && typeof value === 'number' && context?.source !== undefined) {
        sources.set(this as object, context.source);
      }
      if (name === '' && this !== null && typeof value === 'object' && value !== null) {
        const source = sources.get(value);
        const exact = source === undefined ? undefined : parseInt64(source);
        if (exact !== undefined) (value as Record<string, unknown>)[key] = exact;
      }
      return value;
    },
  );
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
  const digits = significant.replace(/0+$/, '');
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
