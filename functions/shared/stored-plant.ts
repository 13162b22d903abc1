/**
 * StoredPlant `{id, name, tag?}`: a plant as the table holds it and as the API and the webhooks
 * send it, with its id as an exact JSON integer. This module owns the table's item shape for
 * readers (the list, read and webhook functions).
 */

/** A stored plant; `id` is an exact int64. */
export interface StoredPlant {
  readonly id: bigint;
  readonly name: string;
  readonly tag?: string;
}

/** A DynamoDB number read with `wrapNumbers`: its exact decimal text. */
interface WrappedNumber {
  readonly value: string;
}

/**
 * The StoredPlant of a table item read with `wrapNumbers` (document client or `unmarshall`).
 * Anything else in the item is ignored; an item without a valid id or name is a fault of ours.
 */
export function storedPlantFromItem(item: Readonly<Record<string, unknown>>): StoredPlant {
  const { id, name, tag } = item;
  const idText = (id as WrappedNumber | undefined)?.value;
  if (typeof idText !== 'string' || typeof name !== 'string') {
    throw new Error('A plants table item lacks a numeric id or a string name.');
  }
  const plantId = BigInt(idText);
  return typeof tag === 'string' ? { id: plantId, name, tag } : { id: plantId, name };
}

/**
 * The StoredPlant as JSON: `{"id":<exact integer>,"name":…,"tag":…}`, `tag` only when present.
 * `JSON.stringify` cannot write a bigint, and a `number` would round ids above 2^53.
 */
export function stringifyStoredPlant(plant: StoredPlant): string {
  const name = JSON.stringify(plant.name);
  const tag = plant.tag === undefined ? '' : `,"tag":${JSON.stringify(plant.tag)}`;
  return `{"id":${plant.id},"name":${name}${tag}}`;
}

/** A JSON array of StoredPlants. */
export function stringifyStoredPlants(plants: readonly StoredPlant[]): string {
  return `[${plants.map(stringifyStoredPlant).join(',')}]`;
}
