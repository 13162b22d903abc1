/**
 * StoredPlant `{id, name, tag?}`: a plant as the table holds it and as the API and the webhooks
 * send it, with its id as an exact JSON integer. This module owns the table's item shape for
 * readers (the list, read and webhook functions).
 */
import { PlantNotFoundError } from '../errors/errors.ts';
import { readItemVersion } from '../http/entity-version.ts';
import { parseDecimalInt64 } from '../http/int64-json.ts';
import type { Logger } from '../platform/logger.ts';

/** A stored plant; `id` is an exact int64. */
export interface StoredPlant {
  readonly id: bigint;
  readonly name: string;
  readonly tag?: string;
}

/** A stored plant with its version (`shared/http/entity-version.ts`), as the changing operations see it. */
export interface VersionedPlant {
  readonly plant: StoredPlant;
  readonly version: number;
}

/** A DynamoDB number read with `wrapNumbers`: its exact decimal text. */
interface WrappedNumber {
  readonly value: string;
}

/**
 * The log line, and its count field, of stored items that are not plants (written by another
 * tool: only the API writes plants). Readers skip such an item and log it at warn; the deployed
 * stage counts them from this line (`ItemsNotPlants`).
 */
export const itemsNotPlantsLog = {
  message: 'skipped stored items that are not plants',
  countField: 'itemsNotPlants',
} as const;

/**
 * The StoredPlant of a table item read with `wrapNumbers` (document client or `unmarshall`), or
 * `undefined` when the item is not one: its id is not an exact int64 (`1.5`, `1e30`), its name not
 * a string, or its tag present and not a string. Other attributes are ignored.
 */
export function readStoredPlant(item: Readonly<Record<string, unknown>>): StoredPlant | undefined {
  const { id, name, tag } = item;
  const plantId = parseDecimalInt64((id as WrappedNumber | undefined)?.value ?? '');
  if (plantId === undefined || typeof name !== 'string') return undefined;
  if (tag === undefined) return { id: plantId, name };
  return typeof tag === 'string' ? { id: plantId, name, tag } : undefined;
}

/** The plant and version of a table item, or `undefined` when either is not one of ours. */
export function readVersionedPlant(
  item: Readonly<Record<string, unknown>>,
): VersionedPlant | undefined {
  const plant = readStoredPlant(item);
  const version = readItemVersion(item);
  return plant === undefined || version === undefined ? undefined : { plant, version };
}

/**
 * The plant and version of the item stored under an id, as a read or a change answers it: none,
 * or an item another tool stored that is not a plant, is no plant (the latter logged at warn and
 * counted, as the list and the webhooks do).
 * @throws PlantNotFoundError
 */
export function requirePlant(
  item: Readonly<Record<string, unknown>> | undefined,
  logger: Logger | undefined,
): VersionedPlant {
  const found = item === undefined ? undefined : readVersionedPlant(item);
  if (found !== undefined) return found;
  if (item !== undefined)
    logger?.warn(itemsNotPlantsLog.message, { [itemsNotPlantsLog.countField]: 1 });
  throw new PlantNotFoundError();
}

/**
 * The StoredPlant of a table item that must be one (the item just read by its id).
 * @throws Error when it is not: the table holds something only another tool could have written.
 */
export function storedPlantFromItem(item: Readonly<Record<string, unknown>>): StoredPlant {
  const plant = readStoredPlant(item);
  if (plant === undefined) throw new Error('A plants table item is not a plant.');
  return plant;
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
