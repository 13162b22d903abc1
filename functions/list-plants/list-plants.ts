/**
 * Listing plants a page at a time, strongly consistent Scans from the key the page before ended
 * after, one segment of the table (DynamoDB's parallel scan) after another: a walk returns every
 * plant that exists throughout exactly once. A walk begins in a random segment, so that first
 * pages spread over the table's partitions instead of all reading its first key range.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { maxPageLimit } from '../shared/http/paging.ts';
import { readStoredPlant, type StoredPlant } from '../shared/plants/stored-plant.ts';
import { type StoreDependencies, sendToStore } from '../shared/platform/dynamodb.ts';

/** A walk's segments, the one it began in, the one it is in, and the plant it stopped after. */
export interface WalkPosition {
  readonly segments: number;
  readonly first: number;
  readonly segment: number;
  readonly after?: bigint;
}

/** The segments a new walk takes the table in: page 1 reads an eighth of it, at random. */
export const listSegments = 8;

export interface PlantsPageRequest {
  /** At most this many plants (1–100). */
  readonly limit: number;
  /** Continue from here (the previous page's end); a new walk, in a random segment, when absent. */
  readonly after?: WalkPosition;
}

export interface PlantsPage {
  readonly plants: readonly StoredPlant[];
  /** Where the next page starts; absent when no plant remains. */
  readonly nextAfter?: WalkPosition & { readonly after: bigint };
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
  const first = Math.floor(Math.random() * listSegments);
  const { segments, ...position } = request.after ?? {
    segments: listSegments,
    first,
    segment: first,
  };
  const found: { plant: StoredPlant; segment: number }[] = [];
  let itemsNotPlants = 0;
  let { segment } = position;
  let startKey: Record<string, unknown> | undefined =
    position.after === undefined ? undefined : { id: position.after };
  let walkEnded = false;
  while (!walkEnded && found.length <= request.limit) {
    // Exactly what the page needs until items that are not plants turn up, then a full page.
    const missing = request.limit + 1 - found.length;
    const wanted = itemsNotPlants === 0 ? missing : Math.max(missing, maxPageLimit + 1);
    const { Items = [], LastEvaluatedKey } = await sendToStore(
      dependencies,
      new ScanCommand({
        TableName: dependencies.tableName,
        Limit: wanted,
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
        ...(segments > 1 ? { Segment: segment, TotalSegments: segments } : {}),
      }),
    );
    for (const item of Items) {
      const plant = readStoredPlant(item);
      if (plant === undefined) itemsNotPlants += 1;
      else found.push({ plant, segment });
    }
    // DynamoDB stops at the Limit or at 1 MB, and then names the key it stopped after; at the
    // segment's end, the walk goes on in the next, until it is back where it began.
    startKey = LastEvaluatedKey;
    if (LastEvaluatedKey === undefined) {
      segment = (segment + 1) % segments;
      walkEnded = segment === position.first;
    }
  }
  const page = found.slice(0, request.limit);
  const last = page.at(-1);
  // More than the page holds, or the walk not at its end: the next page starts after this one.
  const hasMore = found.length > request.limit || !walkEnded;
  const plants = page.map((entry) => entry.plant);
  return hasMore && last !== undefined
    ? {
        plants,
        nextAfter: { segments, first: position.first, segment: last.segment, after: last.plant.id },
        itemsNotPlants,
      }
    : { plants, itemsNotPlants };
}
