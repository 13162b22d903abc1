/** NewPlant (the request body) and Plant (the answer), defined by their valibot schemas. */
import * as v from 'valibot';
import { int64Max, int64Min } from '../shared/http/int64-json.ts';
import { checkPlantBody } from '../shared/plants/plant-body.ts';

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

/** Checks a parsed body. @throws ApiError 40002 naming every failing field (never its value) */
export function parseNewPlant(body: unknown): NewPlant {
  return checkPlantBody(newPlantSchema, fieldRequirements, body);
}

/** The Plant answered for a stored or new plant: the declared fields, `tag` only when present. */
export function toPlant(plant: { name: string; tag?: string | undefined }): Plant {
  return plant.tag === undefined ? { name: plant.name } : { name: plant.name, tag: plant.tag };
}
