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
import { readStoredPlant, type StoredPlant } from '../shared/plants/stored-plant.ts';
import { type StoreDependencies, sendToStore } from '../shared/platform/dynamodb.ts';
import { maxPageLimit } from './page-cursor.ts';

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
  /** Stored items skipped because they are not plants (written by another tool). */
  readonly itemsNotPlants: number;
}

/**
 * One page of plants. It asks for one plant more than the page holds, so that the last page is
 * known to be the last without a further, empty page. An item that is not a plant is skipped,
 * and the Scan goes on from it until the page is full or the table ends, so such items can
 * neither fail a page nor stall a walk.
 * @throws StoreUnavailableError when the store is unreachable, too slow or throttling.
 */
export async function listPlants(
  request: PlantsPageRequest,
  dependencies: StoreDependencies,
): Promise<PlantsPage> {
  const { tableName } = dependencies;
  const plants: StoredPlant[] = [];
  let itemsNotPlants = 0;
  let startKey: Record<string, unknown> | undefined =
    request.after === undefined ? undefined : { id: request.after };
  let moreInTable = true;
  while (moreInTable && plants.length <= request.limit) {
    // A Scan asks for exactly what the page needs until items that are not plants turn up; then
    // for at least a full page, so a long run of them takes few round trips (the next page still
    // starts after the last plant returned, whatever was read beyond it).
    const missing = request.limit + 1 - plants.length;
    const wanted = itemsNotPlants === 0 ? missing : Math.max(missing, maxPageLimit + 1);
    const { Items = [], LastEvaluatedKey } = await sendToStore(
      dependencies,
      new ScanCommand({
        TableName: tableName,
        Limit: wanted,
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of Items) {
      const plant = readStoredPlant(item);
      if (plant === undefined) itemsNotPlants += 1;
      else plants.push(plant);
    }
    // DynamoDB stops at the Limit or at 1 MB, and then names the key it stopped after.
    moreInTable = LastEvaluatedKey !== undefined;
    startKey = LastEvaluatedKey;
  }
  const page = plants.slice(0, request.limit);
  const last = page.at(-1);
  // More plants than the page holds, or the table not walked to its end: the next page starts
  // after this page's last plant.
  const hasMore = plants.length > request.limit || moreInTable;
  return hasMore && last !== undefined
    ? { plants: page, nextAfter: last.id, itemsNotPlants }
    : { plants: page, itemsNotPlants };
}
