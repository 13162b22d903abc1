/** The change a `PUT` (a whole Plant) or `PATCH` (a JSON merge patch, RFC 7396) asks for. */
import * as v from 'valibot';
import { errorCodes } from '../shared/errors/error-codes.ts';
import { ApiError } from '../shared/errors/errors.ts';
import { int64Max, int64Min } from '../shared/http/int64-json.ts';

/** What to set: a name, a tag (`null` removes it); a field left out stays. */
export interface PlantChange {
  readonly name?: string;
  readonly tag?: string | null;
}

/** `PUT`: the whole Plant. An `id`, if sent, must be the path's. Undeclared fields are dropped. */
export const replacementSchema = v.object({
  id: v.optional(v.bigint()),
  name: v.string(),
  tag: v.optional(v.string()),
});

/** `PATCH`: only what is named; `tag: null` removes the tag, a name cannot be removed. */
export const patchSchema = v.object({
  id: v.optional(v.bigint()),
  name: v.optional(v.string()),
  tag: v.optional(v.nullable(v.string())),
});

/** What each field must be, in the client's words; the order is the message's order. */
const fieldRequirements = {
  replacement: {
    id: `an integer from ${int64Min} to ${int64Max}, the id in the path`,
    name: 'a string',
    tag: 'a string when present',
  },
  patch: {
    id: `an integer from ${int64Min} to ${int64Max}, the id in the path`,
    name: 'a string when present',
    tag: 'a string, or null to remove it',
  },
} as const;

type FieldName = 'id' | 'name' | 'tag';

/** A `PUT` body's change (no tag removes it). @throws ApiError 40002 naming every failing field */
export function parseReplacement(body: unknown, id: bigint): PlantChange {
  const { name, tag } = check(replacementSchema, fieldRequirements.replacement, body, id);
  return { name, tag: tag ?? null };
}

/** A `PATCH` body's change: only its members. @throws ApiError 40002 naming every failing field */
export function parsePatch(body: unknown, id: bigint): PlantChange {
  const patch = check(patchSchema, fieldRequirements.patch, body, id);
  return {
    ...(patch.name === undefined ? {} : { name: patch.name }),
    ...('tag' in patch && patch.tag !== undefined ? { tag: patch.tag } : {}),
  };
}

/** Whether the change would leave `plant` as it is (then nothing is written). */
export function changesNothing(
  plant: { readonly name: string; readonly tag?: string },
  change: PlantChange,
): boolean {
  const nameStays = change.name === undefined || change.name === plant.name;
  const tagStays = change.tag === undefined || (change.tag ?? undefined) === plant.tag;
  return nameStays && tagStays;
}

function check<Schema extends typeof replacementSchema | typeof patchSchema>(
  schema: Schema,
  requirements: Readonly<Record<FieldName, string>>,
  body: unknown,
  id: bigint,
): v.InferOutput<Schema> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ApiError(errorCodes.invalidPlant, 'Invalid plant: the body must be a JSON object.');
  }
  const result = v.safeParse(schema, body);
  const missing = new Set<FieldName>();
  const invalid = new Set<FieldName>();
  for (const issue of result.issues ?? []) {
    const field = issue.path?.[0]?.key as FieldName;
    (issue.input === undefined ? missing : invalid).add(field);
  }
  const sentId = (body as { id?: unknown }).id;
  if (typeof sentId === 'bigint' && sentId !== id) invalid.add('id');
  if (result.success && invalid.size === 0) return result.output;
  const failures = (Object.keys(requirements) as FieldName[])
    .filter((field) => missing.has(field) || invalid.has(field))
    .map((field) =>
      missing.has(field)
        ? `${field} is required and must be ${requirements[field]}`
        : `${field} must be ${requirements[field]}`,
    );
  throw new ApiError(errorCodes.invalidPlant, `Invalid plant: ${failures.join('; ')}.`);
}
