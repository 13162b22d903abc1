/**
 * Deleting a plant: no plant is no error, so a retry is safe. Unconditioned (or `If-Match: *`), one
 * DeleteItem; otherwise read, checked, and deleted at the version read.
 */
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { PlantNotFoundError, StoreUnavailableError } from '../shared/errors/errors.ts';
import { hasVersionTerms, versionAttribute } from '../shared/http/entity-version.ts';
import {
  evaluatePreconditions,
  holdsForAnyVersion,
  type Preconditions,
} from '../shared/http/preconditions.ts';
import { readPlant } from '../shared/plants/read-plant.ts';
import {
  anyOf,
  conditionFailed,
  type StoreDependencies,
  writeIf,
} from '../shared/platform/dynamodb.ts';
import type { Logger } from '../shared/platform/logger.ts';

/** Reads and conditioned deletes before a 503: a plant changing this fast. */
const attempts = 3;

/** Removes plant `id` if it meets `preconditions`. @throws ApiError 41200, StoreUnavailableError */
export async function deletePlant(
  id: bigint,
  dependencies: StoreDependencies & { readonly logger?: Logger },
  preconditions: Preconditions = {},
): Promise<void> {
  if (holdsForAnyVersion(preconditions)) {
    await remove(id, undefined, dependencies);
    return;
  }
  for (let attempt = 1; attempt <= attempts; attempt += 1) {
    let version: number;
    try {
      ({ version } = await readPlant(id, dependencies));
    } catch (error) {
      if (error instanceof PlantNotFoundError) return;
      throw error;
    }
    evaluatePreconditions(preconditions, version, 'write');
    // Changed or removed since it was read when the condition fails: read it again.
    if (!conditionFailed(await remove(id, version, dependencies))) return;
  }
  throw new StoreUnavailableError();
}

/** One DeleteItem: of whatever is stored, or only of the plant at `version`. */
async function remove(id: bigint, version: number | undefined, dependencies: StoreDependencies) {
  const { documentClient, tableName } = dependencies;
  const condition =
    version === undefined
      ? {}
      : {
          ConditionExpression: `attribute_exists(#id) AND ${anyOf(hasVersionTerms(version, ':version'))}`,
          ExpressionAttributeNames: { '#id': 'id', '#version': versionAttribute },
          ExpressionAttributeValues: { ':version': version },
        };
  const command = new DeleteCommand({ TableName: tableName, Key: { id }, ...condition });
  return writeIf(
    (abortSignal) => documentClient.send(command, { abortSignal }),
    dependencies.deadlineMilliseconds,
  );
}
