/**
 * Reading one plant by id: one strongly consistent GetItem, so a created plant is found by the
 * next read and a deleted one is not; for `GET /plants/{id}` and a change that writes nothing.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { type StoreDependencies, sendToStore } from '../platform/dynamodb.ts';
import type { Logger } from '../platform/logger.ts';
import { requirePlant, type VersionedPlant } from './stored-plant.ts';

/**
 * The stored plant with `id`, and its version; another tool's item under the id is no plant (see
 * {@link requirePlant}). @throws PlantNotFoundError, StoreUnavailableError
 */
export async function readPlant(
  id: bigint,
  dependencies: StoreDependencies & { readonly logger?: Logger },
): Promise<VersionedPlant> {
  const { Item } = await sendToStore(
    dependencies,
    new GetCommand({ TableName: dependencies.tableName, Key: { id }, ConsistentRead: true }),
  );
  return requirePlant(Item, dependencies.logger);
}
