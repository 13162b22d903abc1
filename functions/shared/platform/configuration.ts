/**
 * The one way every function and `npm start` read the environment: required, optional or
 * defaulted variables, maybe parsed; a blank one is unset, and one error names every problem.
 */
import * as v from 'valibot';

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

/** A required variable's text; `description` says what it is when it is missing. */
export function required(description?: string) {
  return v.string(`is required${description === undefined ? '' : `: ${description}`}`);
}

/** An optional variable's text (`undefined` when not set). */
export const optional = v.optional(v.string());

/** A variable read by `parse`, which throws "must be …"; required unless it has a `fallback`. */
export function parsed<Value>(
  parse: (text: string) => Value,
  options: { readonly fallback?: Value; readonly description?: string } = {},
) {
  const { fallback } = options;
  const read = v.rawTransform<string, Value>(({ dataset, addIssue, NEVER }) => {
    try {
      return parse(dataset.value);
    } catch (error) {
      addIssue({ message: error instanceof Error ? error.message : String(error) });
      return NEVER;
    }
  });
  if (fallback === undefined) return v.pipe(required(options.description), read);
  const defaulted = Object.assign(v.optional(v.pipe(v.string(), read)), { fallback });
  return defaulted as unknown as v.GenericSchema<string | undefined, Value>;
}

/**
 * The variables of `entries` read from `environment`; a problem shows the value, but not one of
 * `secrets`. @throws ConfigurationError (or `createError`'s) naming every problem.
 */
export function readConfiguration<Entries extends v.ObjectEntries>(
  owner: string,
  entries: Entries,
  environment: Readonly<Record<string, string | undefined>>,
  options: {
    readonly secrets?: readonly string[];
    readonly createError?: (problems: readonly string[]) => Error;
  } = {},
): v.InferOutput<v.ObjectSchema<Entries, undefined>> {
  // Every variable is there, `undefined` when not set: a required one then says so.
  const textOf = (name: string) => (isSet(environment, name) ? environment[name] : undefined);
  const set = Object.fromEntries(Object.keys(entries).map((name) => [name, textOf(name)]));
  const result = v.safeParse(v.object(entries), set);
  if (result.success) {
    const output = result.output as Record<string, unknown>;
    for (const [name, schema] of Object.entries(entries)) {
      if (output[name] === undefined && 'fallback' in schema) output[name] = schema.fallback;
    }
    return result.output;
  }
  const problems = result.issues.map((issue) => {
    const name = String(issue.path?.[0]?.key);
    const text = set[name];
    return text === undefined || (options.secrets ?? []).includes(name)
      ? `${name} ${issue.message}.`
      : `${name} ${issue.message}, got "${text}".`;
  });
  throw (options.createError ?? ((found) => new ConfigurationError(owner, found)))(problems);
}

/** Whether `name` is set: neither absent, empty nor blank (`NAME=` is not set). */
export function isSet(
  environment: Readonly<Record<string, string | undefined>>,
  name: string,
): boolean {
  return Boolean(environment[name]?.trim());
}

/** A variable holding a list: its members separated by commas, trimmed, empty ones dropped. */
export function commaList(text: string): string[] {
  return text
    .split(',')
    .map((member) => member.trim())
    .filter((member) => member !== '');
}

/** A variable holding JSON of `schema`'s shape ("must be <description>" otherwise). */
export function parseJson<Schema extends v.GenericSchema>(schema: Schema, description: string) {
  return (text: string): v.InferOutput<Schema> => {
    try {
      return v.parse(schema, JSON.parse(text));
    } catch {
      throw new Error(`must be ${description}`);
    }
  };
}
