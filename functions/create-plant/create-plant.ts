/** Creating a plant: one conditional put, idempotent for identical repeats. */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { errorCodes } from '../shared/errors/error-codes.ts';
import { ApiError } from '../shared/errors/errors.ts';
import {
  nextVersion,
  readItemVersion,
  unversioned,
  versionAttribute,
  versionClock,
} from '../shared/http/entity-version.ts';
import { type TracedWrite, traceAttribute } from '../shared/plants/stored-plant.ts';
import { conditionFailed, type StoreDependencies, writeIf } from '../shared/platform/dynamodb.ts';
import { type NewPlant, type Plant, toPlant } from './new-plant.ts';

/** The answer of a create: the Plant and the stored plant's version (its `ETag`). */
export interface CreatedPlant {
  readonly plant: Plant;
  readonly version: number;
}

/** Stores `newPlant` unless another plant has its id. @throws ApiError 40009, 50300 */
export async function createPlant(
  newPlant: NewPlant,
  dependencies: StoreDependencies & TracedWrite,
): Promise<CreatedPlant> {
  const { documentClient, tableName, traceparent } = dependencies;
  const trace = traceparent === undefined ? {} : { [traceAttribute]: traceparent };
  const plant = toPlant(newPlant);
  const version = nextVersion(unversioned, versionClock());
  const put = new PutCommand({
    TableName: tableName,
    // Exactly the declared fields: nothing else the client sent reaches the table.
    Item: { id: newPlant.id, ...plant, [versionAttribute]: version, ...trace },
    ConditionExpression: 'attribute_not_exists(id)',
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  });
  const written = await writeIf(
    (abortSignal) => documentClient.send(put, { abortSignal }),
    dependencies.deadlineMilliseconds,
  );
  return conditionFailed(written) ? answerExistingPlant(plant, written.item) : { plant, version };
}

/** The stored plant if it equals the new one, else a conflict; no old item is our fault (500). */
function answerExistingPlant(plant: Plant, item?: Record<string, AttributeValue>): CreatedPlant {
  if (item === undefined) throw new Error('The create failed its condition without the item.');
  // The document client does not unmarshall an exception's item; numbers stay wrapped (exact).
  const stored = unmarshall(item, { wrapNumbers: true });
  const version = readItemVersion(stored);
  const same = stored.name === plant.name && stored.tag === plant.tag && version !== undefined;
  if (!same) throw new ApiError(errorCodes.plantConflict);
  return { plant, version };
}
