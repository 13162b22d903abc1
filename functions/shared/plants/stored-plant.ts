/** A plant as the table holds it and the API and webhooks send it, its id an exact integer. */
import { PlantNotFoundError } from '../errors/errors.ts';
import { readItemVersion } from '../http/entity-version.ts';
import { parseDecimalInt64 } from '../http/int64-json.ts';
import type { Logger } from '../platform/logger.ts';

export interface StoredPlant {
  readonly id: bigint;
  readonly name: string;
  readonly tag?: string;
}

/** A stored plant with its version, as the changing operations see it. */
export interface VersionedPlant {
  readonly plant: StoredPlant;
  readonly version: number;
}

type WrappedNumber = { readonly value: string };

/** The last writer's `traceparent`, for the change's webhooks (docs/tracing.md); never answered. */
export const traceAttribute = 'traceparent';

/** What a write of a plant keeps besides it: the writing request's `traceparent`, when traced. */
export interface TracedWrite {
  readonly traceparent?: string;
}

/** The log line of stored non-plant items (another tool's), counted as `ItemsNotPlants`. */
export const itemsNotPlantsLog = {
  message: 'skipped stored items that are not plants',
  countField: 'itemsNotPlants',
} as const;

/** The plant of an item read with `wrapNumbers`, or `undefined`: an id not an int64, and so on. */
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

/** A read item's plant and version (not a plant: logged, counted). @throws PlantNotFoundError */
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

/** `{"id":<exact integer>,"name":…,"tag":…}`: `JSON.stringify` cannot write a bigint. */
export function stringifyStoredPlant(plant: StoredPlant): string {
  const name = JSON.stringify(plant.name);
  const tag = plant.tag === undefined ? '' : `,"tag":${JSON.stringify(plant.tag)}`;
  return `{"id":${plant.id},"name":${name}${tag}}`;
}

/** A JSON array of StoredPlants. */
export function stringifyStoredPlants(plants: readonly StoredPlant[]): string {
  return `[${plants.map(stringifyStoredPlant).join(',')}]`;
}
