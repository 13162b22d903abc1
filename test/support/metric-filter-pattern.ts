/**
 * CloudWatch Logs' JSON filter patterns, as "Filter pattern syntax for metric filters" documents
 * them, for the subset the stack writes: `{ <term> }` where terms are joined with `&&` and `||`
 * (in parentheses) and each is `$.<field> <op> <value>`: a "string" (with `*` wildcards; it
 * matches string fields only) with `=` or `!=`; a number with `=`, `!=`, `<`, `<=`, `>`, `>=`
 * (number fields only); `IS TRUE`, `IS FALSE`, `IS NULL`, `EXISTS` and `NOT EXISTS`.
 * Anything else throws, so a pattern this cannot read fails its test rather than pass it.
 * Where AWS's pages do not say (whether a quoted "*" matches a number), this reads the stricter
 * way, so a filter that passes here does not depend on an undocumented leniency.
 */

type Predicate = (event: unknown) => boolean;

/** Whether the JSON log line `line` matches `pattern`, as CloudWatch Logs would decide. */
export function matchesFilterPattern(pattern: string, line: string): boolean {
  let event: unknown;
  try {
    event = JSON.parse(line);
  } catch {
    return false;
  }
  return compile(pattern)(event);
}

function compile(pattern: string): Predicate {
  const text = pattern.trim();
  if (!text.startsWith('{') || !text.endsWith('}')) {
    throw new Error(`Not a JSON filter pattern: ${pattern}`);
  }
  const tokens = tokenize(text.slice(1, -1));
  let position = 0;
  const peek = () => tokens[position];
  const next = () => {
    const token = tokens[position];
    position += 1;
    if (token === undefined) throw new Error(`Unexpected end of pattern: ${pattern}`);
    return token;
  };

  const expression = (): Predicate => {
    let left = operand();
    for (let operator = peek(); operator === '&&' || operator === '||'; operator = peek()) {
      next();
      const right = operand();
      const both = left;
      left =
        operator === '&&'
          ? (event) => both(event) && right(event)
          : (event) => both(event) || right(event);
    }
    return left;
  };

  const operand = (): Predicate => {
    if (peek() === '(') {
      next();
      const inner = expression();
      if (next() !== ')') throw new Error(`Missing ) in ${pattern}`);
      return inner;
    }
    return comparison();
  };

  const comparison = (): Predicate => {
    const selector = next();
    if (!/^\$(\.[A-Za-z_][A-Za-z0-9_]*)+$/.test(selector)) {
      throw new Error(`Unsupported selector ${selector} in ${pattern}`);
    }
    const path = selector.split('.').slice(1);
    const read = (event: unknown) => fieldOf(event, path);
    const operator = next();
    if (operator === 'IS') {
      const value = next();
      const expected = { TRUE: true, FALSE: false, NULL: null }[value];
      if (expected === undefined) throw new Error(`Unsupported IS ${value} in ${pattern}`);
      return (event) => read(event).found && read(event).value === expected;
    }
    if (operator === 'EXISTS') return (event) => read(event).found;
    if (operator === 'NOT') {
      if (next() !== 'EXISTS') throw new Error(`Unsupported NOT in ${pattern}`);
      return (event) => !read(event).found;
    }
    const value = next();
    if (value.startsWith('"')) {
      const expected = JSON.parse(value) as string;
      const wildcard = new RegExp(`^${expected.split('*').map(escapeRegExp).join('.*')}$`, 's');
      if (operator !== '=' && operator !== '!=') {
        throw new Error(`Unsupported string operator ${operator} in ${pattern}`);
      }
      const equal = (event: unknown) => {
        const { found, value: actual } = read(event);
        return found && typeof actual === 'string' && wildcard.test(actual);
      };
      return operator === '=' ? equal : (event) => read(event).found && !equal(event);
    }
    const number = Number(value);
    if (!Number.isFinite(number)) throw new Error(`Unsupported value ${value} in ${pattern}`);
    const compare: Record<string, (actual: number) => boolean> = {
      '=': (actual) => actual === number,
      '!=': (actual) => actual !== number,
      '<': (actual) => actual < number,
      '<=': (actual) => actual <= number,
      '>': (actual) => actual > number,
      '>=': (actual) => actual >= number,
    };
    const test = compare[operator];
    if (test === undefined) throw new Error(`Unsupported operator ${operator} in ${pattern}`);
    return (event) => {
      const { found, value: actual } = read(event);
      return found && typeof actual === 'number' && test(actual);
    };
  };

  const predicate = expression();
  if (position !== tokens.length) throw new Error(`Unexpected ${peek()} in ${pattern}`);
  return predicate;
}

function tokenize(text: string): string[] {
  const pattern = /\s*("(?:[^"\\]|\\.)*"|&&|\|\||!=|<=|>=|[=<>()]|[^\s=<>()!&|"]+)/gy;
  const tokens: string[] = [];
  for (;;) {
    const start = pattern.lastIndex;
    const match = pattern.exec(text);
    if (match === null) {
      if (text.slice(start).trim() !== '') throw new Error(`Cannot read ${text.slice(start)}`);
      return tokens;
    }
    tokens.push(match[1] ?? '');
  }
}

function fieldOf(event: unknown, path: readonly string[]): { found: boolean; value?: unknown } {
  let value = event;
  for (const key of path) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, key)) {
      return { found: false };
    }
    value = (value as Record<string, unknown>)[key];
  }
  return { found: true, value };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
