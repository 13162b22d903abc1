/**
 * Listing plants a page at a time: one strongly consistent Scan per page, continued from the key
 * after which the previous page ended.
 *
 * A Scan walks the table in the order of its partition keys' hashes, and `ExclusiveStartKey`
 * resumes at a position in that order (the key need not exist any more). So a walk from page to
 * page returns every plant that exists for the whole walk exactly once, whatever is created or
 * deleted meanwhile; plants created or deleted during the walk may or may not appear.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { callStore, type StoreDependencies } from '../shared/dynamodb.ts';
import { type StoredPlant, storedPlantFromItem } from '../shared/stored-plant.ts';

export interface PlantsPageRequest {
  /** At most this many plants (1–100). */
  readonly limit: number;
  /** Continue after the plant with this id (the previous page's last); from the start when absent. */
  readonly after?: bigint;
}

export interface PlantsPage {
  readonly plants: readonly StoredPlant[];
  /** Where the next page starts (after this id); absent when no plant remains. */
  readonly nextAfter?: bigint;
}

/**
 * One page of plants. It asks for one plant more than the page holds, so that the last page is
 * known to be the last without a further, empty page.
 * @throws StoreUnavailableError when the store is unreachable, too slow or throttling.
 */
export async function listPlants(
  request: PlantsPageRequest,
  dependencies: StoreDependencies,
): Promise<PlantsPage> {
  const { documentClient, tableName } = dependencies;
  const { Items = [], LastEvaluatedKey } = await callStore(
    (abortSignal) =>
      documentClient.send(
        new ScanCommand({
          TableName: tableName,
          Limit: request.limit + 1,
          ConsistentRead: true,
          ...(request.after === undefined ? {} : { ExclusiveStartKey: { id: request.after } }),
        }),
        { abortSignal },
      ),
    dependencies.deadlineMilliseconds,
  );
  const plants = Items.slice(0, request.limit).map(storedPlantFromItem);
  const last = plants.at(-1);
  // More items than the page holds: the next page starts after its last plant. Fewer, with a
  // LastEvaluatedKey: DynamoDB stopped at its 1 MB page size, after the last item it returned.
  const hasMore = Items.length > request.limit || LastEvaluatedKey !== undefined;
  return hasMore && last !== undefined ? { plants, nextAfter: last.id } : { plants };
}
