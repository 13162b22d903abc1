/**
 * Deleting a plant by id: one unconditional DeleteItem. Deleting an id that is not stored is not
 * an error, so a client may safely retry a delete whose answer it did not get.
 */
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { callStore, type StoreDependencies } from '../shared/dynamodb.ts';

/**
 * Removes the plant with `id`, if there is one; the id can be created again afterwards.
 * @throws StoreUnavailableError when the store is unreachable, too slow or throttling.
 */
export async function deletePlant(id: bigint, dependencies: StoreDependencies): Promise<void> {
  const { documentClient, tableName } = dependencies;
  await callStore(
    (abortSignal) =>
      documentClient.send(new DeleteCommand({ TableName: tableName, Key: { id } }), {
        abortSignal,
      }),
    dependencies.deadlineMilliseconds,
  );
}
