/** NewPlant (the request body) and Plant (the answer), defined by their valibot schemas. */
import * as v from 'valibot';
import { errorCodes } from '../shared/errors/error-codes.ts';
import { ApiError } from '../shared/errors/errors.ts';
import { int64Max, int64Min } from '../shared/http/int64-json.ts';

/** `POST /plants`'s body: `id` a `bigint` (`parseJsonWithInt64`); undeclared fields dropped. */
export const newPlantSchema = v.object({
  id: v.bigint(),
  name: v.string(),
  tag: v.optional(v.string()),
});

/** A plant to create: `{ id, name, tag? }` with an exact int64 `id`. */
export type NewPlant = v.InferOutput<typeof newPlantSchema>;

/** What the API answers: exactly the stored fields without the id, `tag` absent when none. */
export interface Plant {
  readonly name: string;
  readonly tag?: string;
}

/** What each field must be, in the client's words; the order is the message's order. */
const fieldRequirements = {
  id: `an integer from ${int64Min} to ${int64Max}`,
  name: 'a string',
  tag: 'a string when present',
} as const;

type FieldName = keyof typeof fieldRequirements;

/** Checks a parsed body. @throws ApiError 40002 naming every failing field (never its value) */
export function parseNewPlant(body: unknown): NewPlant {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ApiError(errorCodes.invalidPlant, 'Invalid plant: the body must be a JSON object.');
  }
  const result = v.safeParse(newPlantSchema, body);
  if (result.success) return result.output;
  const missing = new Set<FieldName>();
  const invalid = new Set<FieldName>();
  for (const issue of result.issues) {
    const field = issue.path?.[0]?.key as FieldName;
    (issue.input === undefined ? missing : invalid).add(field);
  }
  const failures = Object.keys(fieldRequirements)
    .filter(
      (field): field is FieldName =>
        missing.has(field as FieldName) || invalid.has(field as FieldName),
    )
    .map((field) =>
      missing.has(field)
        ? `${field} is required and must be ${fieldRequirements[field]}`
        : `${field} must be ${fieldRequirements[field]}`,
    );
  throw new ApiError(errorCodes.invalidPlant, `Invalid plant: ${failures.join('; ')}.`);
}

/** The Plant answered for a stored or new plant: the declared fields, `tag` only when present. */
export function toPlant(plant: { name: string; tag?: string | undefined }): Plant {
  return plant.tag === undefined ? { name: plant.name } : { name: plant.name, tag: plant.tag };
}
