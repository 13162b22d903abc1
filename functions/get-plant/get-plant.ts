/**
 * Reading one plant by id: one strongly consistent GetItem, so a plant acknowledged by a create
 * is found by the next read, and a deleted one is not.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { callStore, type StoreDependencies } from '../shared/dynamodb.ts';
import { PlantNotFoundError } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import {
  itemsNotPlantsLog,
  readVersionedPlant,
  type VersionedPlant,
} from '../shared/stored-plant.ts';

/**
 * The stored plant with `id`, and its version. An item another tool stored under the id that is not a plant is
 * no plant: not found, and logged at warn and counted as the list and the webhooks do.
 * @throws PlantNotFoundError when no plant has this id.
 * @throws StoreUnavailableError when the store is unreachable, too slow or throttling.
 */
export async function getPlant(
  id: bigint,
  dependencies: StoreDependencies & { readonly logger?: Logger },
): Promise<VersionedPlant> {
  const { documentClient, tableName } = dependencies;
  const { Item } = await callStore(
    (abortSignal) =>
      documentClient.send(
        new GetCommand({ TableName: tableName, Key: { id }, ConsistentRead: true }),
        { abortSignal },
      ),
    dependencies.deadlineMilliseconds,
  );
  if (Item === undefined) throw new PlantNotFoundError();
  const plant = readVersionedPlant(Item);
  if (plant === undefined) {
    dependencies.logger?.warn(itemsNotPlantsLog.message, { [itemsNotPlantsLog.countField]: 1 });
    throw new PlantNotFoundError();
  }
  return plant;
}
