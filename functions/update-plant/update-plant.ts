/**
 * Changing a plant: one conditional UpdateItem that writes only when the plant exists, has the
 * version `If-Match` names and would change; a refusal's old item tells 404, 412 or "nothing to
 * change". The new version comes from the clock or the stored one, never from `If-Match`.
 */
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { PlantNotFoundError, StoreUnavailableError } from '../shared/errors/errors.ts';
import {
  hasVersionTerms,
  maxVersion,
  nextVersion,
  unversioned,
  versionAttribute,
  versionClock,
} from '../shared/http/entity-version.ts';
import {
  evaluatePreconditions,
  holdsForAnyVersion,
  type Preconditions,
} from '../shared/http/preconditions.ts';
import { readPlant } from '../shared/plants/read-plant.ts';
import {
  readVersionedPlant,
  requirePlant,
  type TracedWrite,
  traceAttribute,
  type VersionedPlant,
} from '../shared/plants/stored-plant.ts';
import {
  anyOf,
  type ConditionFailed,
  conditionFailed,
  type StoreDependencies,
  updateIf,
} from '../shared/platform/dynamodb.ts';
import type { Logger } from '../shared/platform/logger.ts';
import { changesNothing, type PlantChange } from './plant-change.ts';

/** What a change is conditioned on: `If-Match` (required), and `If-None-Match` when sent. */
export interface ChangePreconditions extends Preconditions {
  readonly ifMatch: NonNullable<Preconditions['ifMatch']>;
}

export interface UpdateDependencies extends StoreDependencies, TracedWrite {
  readonly logger?: Logger;
  /** The clock the new version is taken from: {@link versionClock} (microseconds) by default. */
  readonly now?: () => number;
}

/** Tries of a change whose pinned version changed under it, spread out; then 503. */
const attempts = 6;

/**
 * What the write is conditioned on: one stored version (it writes the next), or, for `*`, any
 * version below the clock's (it writes the clock's) or from it on (DynamoDB adds 1). Versions only
 * grow, so a `*` change takes two writes at most, unless the plant is deleted and created in between.
 */
type Pin = { readonly version: number } | 'below-clock' | 'from-clock';

/**
 * Applies `change` to plant `id` if `If-Match` names its version and `If-None-Match` does not
 * (RFC 9110 §13.2.2). @throws PlantNotFoundError (no upsert), ApiError 41200, or
 * StoreUnavailableError, also when the plant kept changing under a `*` change.
 */
export async function updatePlant(
  id: bigint,
  change: PlantChange,
  preconditions: ChangePreconditions,
  dependencies: UpdateDependencies,
): Promise<VersionedPlant> {
  const clock = Math.trunc((dependencies.now ?? versionClock)());
  const nothingToWrite = change.name === undefined && change.tag === undefined;
  const anyVersion = holdsForAnyVersion(preconditions);
  const { ifMatch } = preconditions;
  const check = (found: VersionedPlant) => checkVersion(found, preconditions);
  let pin: Pin;
  if (anyVersion && !nothingToWrite) {
    pin = 'below-clock';
  } else if (
    ifMatch !== 'any' &&
    ifMatch.length === 1 &&
    (ifMatch[0] as number) < maxVersion &&
    preconditions.ifNoneMatch === undefined &&
    !nothingToWrite
  ) {
    pin = { version: ifMatch[0] as number };
  } else {
    // Nothing to write, a list of ETags, the highest version or an If-None-Match: read the
    // version, and answer from it or pin the write to it.
    const found = check(await readPlant(id, dependencies));
    if (nothingToWrite || changesNothing(found.plant, change)) return found;
    pin = { version: found.version };
  }
  for (let attempt = 1; attempt <= attempts; attempt += 1) {
    const written = await write(id, change, pin, clock, dependencies);
    if (!conditionFailed(written)) return written;
    const stored =
      written.item === undefined ? undefined : unmarshall(written.item, { wrapNumbers: true });
    const found = check(requirePlant(stored, dependencies.logger));
    if (changesNothing(found.plant, change)) return found;
    // `*`: the form for the version found; otherwise the version found, which `check` accepted.
    const next: Pin = anyVersion
      ? found.version < clock
        ? 'below-clock'
        : 'from-clock'
      : { version: found.version };
    if (samePin(next, pin)) {
      throw new Error('The change failed its condition for a reason the item does not show.');
    }
    pin = next;
    if (!anyVersion)
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * attempt));
  }
  throw new StoreUnavailableError();
}

/**
 * The plant, if its version meets the preconditions and has a next version that stays exact.
 * @throws ApiError 41200; PlantNotFoundError at the highest version (only another tool stores it)
 */
function checkVersion(found: VersionedPlant, preconditions: Preconditions): VersionedPlant {
  evaluatePreconditions(preconditions, found.version, 'write');
  if (found.version >= maxVersion) throw new PlantNotFoundError();
  return found;
}

function samePin(one: Pin, other: Pin): boolean {
  return typeof one === 'object' && typeof other === 'object'
    ? one.version === other.version
    : one === other;
}

/** The one conditional write: exists, is a plant, has the pinned version, and would change. */
async function write(
  id: bigint,
  change: PlantChange,
  pin: Pin,
  clock: number,
  dependencies: UpdateDependencies,
): Promise<VersionedPlant | ConditionFailed> {
  const names: Record<string, string> = { '#id': 'id', '#name': 'name', '#tag': 'tag' };
  names['#version'] = versionAttribute;
  const values: Record<string, unknown> = { ':string': 'S', ':number': 'N' };
  const sets = [versionUpdate(pin, clock, values)];
  if (dependencies.traceparent !== undefined) {
    names['#trace'] = traceAttribute;
    values[':trace'] = dependencies.traceparent;
    sets.push('#trace = :trace');
  }
  const differences: string[] = [];
  if (change.name !== undefined) {
    sets.push('#name = :name');
    values[':name'] = change.name;
    differences.push('#name <> :name');
  }
  if (change.tag === null) {
    differences.push('attribute_exists(#tag)');
  } else if (change.tag !== undefined) {
    sets.push('#tag = :tag');
    values[':tag'] = change.tag;
    differences.push('attribute_not_exists(#tag) OR #tag <> :tag');
  }
  const written = await updateIf(dependencies, {
    TableName: dependencies.tableName,
    Key: { id },
    UpdateExpression: `SET ${sets.join(', ')}${change.tag === null ? ' REMOVE #tag' : ''}`,
    ConditionExpression: [
      'attribute_exists(#id)',
      // A plant's types: an item a read calls "not a plant" is not changed.
      'attribute_type(#name, :string)',
      '(attribute_not_exists(#tag) OR attribute_type(#tag, :string))',
      '(attribute_not_exists(#version) OR attribute_type(#version, :number))',
      anyOf(versionCondition(pin, clock, values)),
      anyOf(differences),
    ].join(' AND '),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
    ReturnValues: 'ALL_NEW',
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  });
  if (conditionFailed(written)) return written;
  const { Attributes } = written;
  const updated = Attributes === undefined ? undefined : readVersionedPlant(Attributes);
  if (updated === undefined) throw new Error('The updated item is not a plant.');
  return updated;
}

/** How the write sets the version (the values it needs added to `values`). */
function versionUpdate(pin: Pin, clock: number, values: Record<string, unknown>): string {
  if (pin === 'from-clock') {
    values[':one'] = 1;
    return '#version = #version + :one';
  }
  values[':version'] = pin === 'below-clock' ? clock : nextVersion(pin.version, clock);
  return '#version = :version';
}

/**
 * The version condition: the pinned version (0 is also an item without one), or, for `*`, one
 * below the clock or one from it on, never negative nor without room for the next.
 */
function versionCondition(pin: Pin, clock: number, values: Record<string, unknown>): string[] {
  if (pin === 'below-clock') {
    values[':unversioned'] = unversioned;
    values[':below'] = clock - 1;
    return ['attribute_not_exists(#version)', '#version BETWEEN :unversioned AND :below'];
  }
  if (pin === 'from-clock') {
    values[':clock'] = clock;
    values[':top'] = maxVersion - 1;
    return ['#version BETWEEN :clock AND :top'];
  }
  values[':pinned'] = pin.version;
  return hasVersionTerms(pin.version, ':pinned');
}
