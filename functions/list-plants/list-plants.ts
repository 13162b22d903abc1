/**
 * Listing plants a page at a time, one strongly consistent Scan each, from the key the page
 * before ended after: a walk returns every plant that exists throughout exactly once.
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
 * One page of plants, and one more asked for, so the last page is known without an empty one.
 * Items that are not plants are skipped: they can neither fail a page nor stall a walk.
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
    // Exactly what the page needs until items that are not plants turn up, then a full page.
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
  // More than the page holds, or the table not at its end: the next page starts after this one.
  const hasMore = plants.length > request.limit || moreInTable;
  return hasMore && last !== undefined
    ? { plants: page, nextAfter: last.id, itemsNotPlants }
    : { plants: page, itemsNotPlants };
}
