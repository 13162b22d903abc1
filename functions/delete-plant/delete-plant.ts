/**
 * Deleting a plant by id. Deleting an id that is not stored is not an error, so a client may
 * safely retry a delete whose answer it did not get. Without preconditions (or with
 * `If-Match: *`) it is one unconditional DeleteItem; with an `If-Match` naming versions, or an
 * `If-None-Match`, the plant is read, the preconditions are evaluated against its version, and
 * the DeleteItem is conditioned on that version, so a plant changed in between is not removed.
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

/** Reads and conditioned deletes before the client is told to retry (503): a plant changing this fast. */
const attempts = 3;

/**
 * Removes the plant with `id`, if there is one and it meets `preconditions`; the id can be
 * created again afterwards. No plant (or an item that is not one) is not an error.
 * @throws ApiError 41200 when `If-Match` names none of the plant's version, or
 * `If-None-Match` names it.
 * @throws StoreUnavailableError when the store is unreachable, too slow or throttling, or the
 * plant kept changing between its read and its delete.
 */
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
  return writeIf(
    (abortSignal) =>
      documentClient.send(new DeleteCommand({ TableName: tableName, Key: { id }, ...condition }), {
        abortSignal,
      }),
    dependencies.deadlineMilliseconds,
  );
}
