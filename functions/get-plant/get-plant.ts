/**
 * Reading one plant by id: one strongly consistent GetItem, so a plant acknowledged by a create
 * is found by the next read, and a deleted one is not.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { callStore, type StoreDependencies } from '../shared/dynamodb.ts';
import { PlantNotFoundError } from '../shared/errors.ts';
import { type StoredPlant, storedPlantFromItem } from '../shared/stored-plant.ts';

/**
 * The stored plant with `id`.
 * @throws PlantNotFoundError when no plant has this id.
 * @throws StoreUnavailableError when the store is unreachable, too slow or throttling.
 */
export async function getPlant(id: bigint, dependencies: StoreDependencies): Promise<StoredPlant> {
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
  return storedPlantFromItem(Item);
}
