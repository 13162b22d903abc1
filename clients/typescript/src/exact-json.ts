/**
 * JSON with exact int64 ids: the API writes every `id` as a JSON integer of up to 19 digits,
 * which `JSON.parse` would round past 2^53. These read every `id` member as a `bigint` and write
 * a `bigint` as a JSON integer, in any browser or Node.js.
 */

/**
 * Parses JSON text, every number that is the value of an `id` member read as a `bigint`. The
 * text is scanned once, strings skipped whole (their escapes included), so an `"id":` inside a
 * string is never touched.
 */
export function parseExactJson(text: string): unknown {
  const marker = `~exact-id~${Math.random()}~`;
  let out = '';
  let previous = ''; // the last token outside strings: a string, or a structural character
  for (let index = 0; index < text.length; ) {
    const char = text[index] as string;
    if (char === '"') {
      let end = index + 1;
      while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      previous = text.slice(index, end + 1);
      out += previous;
      index = end + 1;
      continue;
    }
    if (char === ':' && previous === '"id"') {
      out += char;
      index += 1;
      while (index < text.length && ' \t\n\r'.includes(text[index] as string)) {
        out += text[index];
        index += 1;
      }
      const number = /^-?[0-9]+/.exec(text.slice(index, index + 24))?.[0];
      if (number !== undefined && !/[.eE]/.test(text[index + number.length] ?? '')) {
        out += `"${marker}${number}"`;
        index += number.length;
      }
      previous = '';
      continue;
    }
    if (!' \t\n\r'.includes(char)) previous = char;
    out += char;
    index += 1;
  }
  return JSON.parse(out, (key, value) =>
    key === 'id' && typeof value === 'string' && value.startsWith(marker)
      ? BigInt(value.slice(marker.length))
      : value,
  );
}

/** Writes JSON, every `bigint` as a JSON integer (exact, all its digits). */
export function stringifyExactJson(value: unknown): string {
  const marker = `~bigint~${Math.random()}~`;
  const text = JSON.stringify(value, (_key, entry) =>
    typeof entry === 'bigint' ? `${marker}${entry}` : entry,
  );
  const quoted = JSON.stringify(marker)
    .slice(1, -1)
    .replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return text.replace(new RegExp(`"${quoted}(-?[0-9]+)"`, 'g'), '$1');
}
