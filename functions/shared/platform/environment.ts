/**
 * The one way configuration is read from the environment, by every function and by `npm start`:
 * a variable is required, or has a default, and may be parsed; an empty or blank value counts as
 * not set.
 * Every problem is collected, and {@link EnvironmentReader.check} throws one error naming each
 * variable and what is wrong with it, so a cold start fails once with the whole story.
 */

/** Thrown when the environment does not describe a usable configuration. */
export class ConfigurationError extends Error {
  override readonly name: string = 'ConfigurationError';
  readonly problems: readonly string[];

  constructor(owner: string, problems: readonly string[]) {
    super(
      problems.length === 1
        ? `${owner}: ${problems[0]}`
        : `${owner}: invalid configuration:\n- ${problems.join('\n- ')}`,
    );
    this.problems = problems;
  }
}

/** How a variable's text becomes a value; it throws an Error whose message says what is wrong. */
export type Parse<Value> = (text: string) => Value;

export interface ReadOptions<Value> {
  /** The value when the variable is not set; without one, the variable is required. */
  readonly fallback?: Value;
  /** What the variable is, for the message when it is required and missing. */
  readonly description?: string;
  /** A secret: a problem with it never shows its value. */
  readonly secret?: boolean;
}

export interface EnvironmentReader {
  /** The variable's text (required unless there is a fallback). */
  string(name: string, options?: ReadOptions<string>): string;
  /** The variable's text, or `undefined` when it is not set. */
  optional(name: string): string | undefined;
  /**
   * The variable parsed by `parse` (required unless there is a fallback). What `parse` throws
   * becomes a problem naming the variable and its value.
   */
  parse<Value>(name: string, parse: Parse<Value>, options?: ReadOptions<Value>): Value;
  /** @throws {ConfigurationError} when any variable read so far had a problem. */
  check(): void;
}

/**
 * A reader of `environment` for `owner` (a function's or a command's name, which starts each
 * error message). Read every variable, then call `check()` before using the values.
 */
export function readEnvironment(
  environment: Readonly<Record<string, string | undefined>>,
  owner: string,
  createError: (problems: readonly string[]) => Error = (problems) =>
    new ConfigurationError(owner, problems),
): EnvironmentReader {
  const problems: string[] = [];
  // Empty or blank is "not set" (what `NAME=` in a shell or an env file gives); any other value
  // is given to its parser as it is, spaces included.
  const textOf = (name: string) => (environment[name]?.trim() ? environment[name] : undefined);
  const missing = (name: string, description: string | undefined) => {
    problems.push(`${name} is required${description === undefined ? '' : `: ${description}`}.`);
  };
  const parse = <Value>(name: string, read: Parse<Value>, options: ReadOptions<Value> = {}) => {
    const text = textOf(name);
    if (text === undefined) {
      if (options.fallback === undefined) missing(name, options.description);
      return options.fallback as Value;
    }
    try {
      return read(text);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      problems.push(options.secret ? `${name} ${reason}.` : `${name} ${reason}, got "${text}".`);
      return undefined as Value;
    }
  };
  return {
    string: (name, options) => parse(name, (text) => text, options) ?? '',
    optional: textOf,
    parse,
    check() {
      if (problems.length > 0) throw createError(problems);
    },
  };
}

/** A variable holding a list: its members separated by commas, trimmed, empty ones dropped. */
export function commaList(text: string): string[] {
  return text
    .split(',')
    .map((member) => member.trim())
    .filter((member) => member !== '');
}

/** Parses JSON and checks its shape; `description` says what was expected ("must be …"). */
export function parseJson<Value>(
  isValue: (value: unknown) => value is Value,
  description: string,
): Parse<Value> {
  return (text) => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new Error(`must be ${description}`);
    }
    if (!isValue(value)) throw new Error(`must be ${description}`);
    return value;
  };
}
