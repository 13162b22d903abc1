/** The change a `PUT` (a whole Plant) or `PATCH` (a JSON merge patch, RFC 7396) asks for. */
import * as v from 'valibot';
import { int64Max, int64Min } from '../shared/http/int64-json.ts';
import { checkPlantBody } from '../shared/plants/plant-body.ts';

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

/** A `PUT` body's change (no tag removes it). @throws ApiError 40002 naming every failing field */
export function parseReplacement(body: unknown, id: bigint): PlantChange {
  const { name, tag } = checkPlantBody(replacementSchema, fieldRequirements.replacement, body, id);
  return { name, tag: tag ?? null };
}

/** A `PATCH` body's change: only its members. @throws ApiError 40002 naming every failing field */
export function parsePatch(body: unknown, id: bigint): PlantChange {
  const patch = checkPlantBody(patchSchema, fieldRequirements.patch, body, id);
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
