/**
 * Changing a plant: one conditional UpdateItem that writes only when the plant exists, has a
 * version `If-Match` names and would change. When the write is refused, the item as it was
 * (returned with the refusal) tells which: no plant (404), another version (412), or nothing to
 * change (200, nothing written, the same version).
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { callStore, type StoreDependencies } from '../shared/dynamodb.ts';
import {
  PlantNotFoundError,
  PreconditionFailedError,
  StoreUnavailableError,
} from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import { nextVersion, unversioned, versionAttribute } from '../shared/plant-version.ts';
import {
  itemsNotPlantsLog,
  readVersionedPlant,
  type VersionedPlant,
} from '../shared/stored-plant.ts';
import { changesNothing, type PlantChange } from './plant-change.ts';

/** The versions a change is for: those `If-Match` names, or `'any'` for `If-Match: *`. */
export type ExpectedVersions = readonly number[] | 'any';

export interface UpdateDependencies extends StoreDependencies {
  readonly logger?: Logger;
  /** The clock the new version is taken from. */
  readonly now?: () => number;
}

/**
 * A `*` change whose plant keeps changing under it is tried again with the version it found;
 * after this many tries the client is told to retry (503), which is as safe as the first try.
 */
const attemptsForAnyVersion = 3;

/** DynamoDB's `IN` takes at most 100 values; no client sends more ETags than that. */
const maxExpectedVersions = 100;

/**
 * Applies `change` to the plant `id` if its version is one of `expected`.
 * @throws PlantNotFoundError when no plant has this id (never created: no upsert).
 * @throws PreconditionFailedError when the plant's version is not one `If-Match` names.
 * @throws StoreUnavailableError when the store is unreachable, too slow or throttling.
 */
export async function updatePlant(
  id: bigint,
  change: PlantChange,
  expected: ExpectedVersions,
  dependencies: UpdateDependencies,
): Promise<VersionedPlant> {
  const now = dependencies.now ?? Date.now;
  const versions =
    expected === 'any' ? 'any' : [...new Set(expected)].slice(0, maxExpectedVersions);
  if ((change.name === undefined && change.tag === undefined) || versions.length === 0) {
    // Nothing to write, or nothing could match: a read answers as the write would have.
    return checkedPlant(await readPlant(id, dependencies), versions, dependencies);
  }
  let pinned: number | undefined;
  for (let attempt = 1; attempt <= attemptsForAnyVersion; attempt += 1) {
    const matched = versions === 'any' ? (pinned === undefined ? 'any' : [pinned]) : versions;
    const current = matched === 'any' ? unversioned : Math.max(...matched);
    try {
      return await write(id, change, matched, nextVersion(current, now()), dependencies);
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const stored =
        error.Item === undefined ? undefined : unmarshall(error.Item, { wrapNumbers: true });
      const found = checkedPlant(stored, versions, dependencies);
      if (changesNothing(found.plant, change)) return found;
      // `*` and the stored version is not below the clock, or it changed since: pin and retry.
      pinned = found.version;
      if (versions !== 'any') throw error;
    }
  }
  throw new StoreUnavailableError();
}

/** The plant of a stored item, if it has one of `versions`. */
function checkedPlant(
  item: Readonly<Record<string, unknown>> | undefined,
  versions: ExpectedVersions,
  dependencies: UpdateDependencies,
): VersionedPlant {
  if (item === undefined) throw new PlantNotFoundError();
  const found = readVersionedPlant(item);
  if (found === undefined) {
    dependencies.logger?.warn(itemsNotPlantsLog.message, { [itemsNotPlantsLog.countField]: 1 });
    throw new PlantNotFoundError();
  }
  if (versions !== 'any' && !versions.includes(found.version)) throw new PreconditionFailedError();
  return found;
}

/** The one conditional write: exists, is a plant, has a matched version, and would change. */
async function write(
  id: bigint,
  change: PlantChange,
  matched: ExpectedVersions,
  version: number,
  dependencies: UpdateDependencies,
): Promise<VersionedPlant> {
  const names: Record<string, string> = { '#id': 'id', '#name': 'name' };
  names['#version'] = versionAttribute;
  if (change.tag !== undefined) names['#tag'] = 'tag';
  const values: Record<string, unknown> = { ':string': 'S', ':version': version };
  const sets = ['#version = :version'];
  const removes: string[] = [];
  const differences: string[] = [];
  if (change.name !== undefined) {
    sets.push('#name = :name');
    values[':name'] = change.name;
    differences.push('#name <> :name');
  }
  if (change.tag === null) {
    removes.push('#tag');
    differences.push('attribute_exists(#tag)');
  } else if (change.tag !== undefined) {
    sets.push('#tag = :tag');
    values[':tag'] = change.tag;
    differences.push('attribute_not_exists(#tag) OR #tag <> :tag');
  }
  const { Attributes } = await callStore(
    (abortSignal) =>
      dependencies.documentClient.send(
        new UpdateCommand({
          TableName: dependencies.tableName,
          Key: { id },
          UpdateExpression: `SET ${sets.join(', ')}${removes.length > 0 ? ` REMOVE ${removes.join(', ')}` : ''}`,
          ConditionExpression: [
            'attribute_exists(#id)',
            'attribute_type(#name, :string)',
            anyOf(versionCondition(matched, values)),
            anyOf(differences),
          ].join(' AND '),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
        { abortSignal },
      ),
    dependencies.deadlineMilliseconds,
  );
  const updated = Attributes === undefined ? undefined : readVersionedPlant(Attributes);
  if (updated === undefined) throw new Error('The updated item is not a plant.');
  return updated;
}

/**
 * The version part of the condition, its values added to `values`: one of the matched versions
 * (0 is an item without one), or for `*` any version below the new one (one written by a clock
 * ahead of this one is pinned and tried again).
 */
function versionCondition(matched: ExpectedVersions, values: Record<string, unknown>): string[] {
  if (matched === 'any') return ['attribute_not_exists(#version)', '#version < :version'];
  const terms: string[] = [];
  const listed = matched.filter((version) => version !== unversioned);
  if (listed.length < matched.length) terms.push('attribute_not_exists(#version)');
  if (listed.length > 0) {
    const placeholders = listed.map((version, index) => {
      values[`:v${index}`] = version;
      return `:v${index}`;
    });
    terms.push(`#version IN (${placeholders.join(', ')})`);
  }
  return terms;
}

/**
 * Terms joined by OR, in parentheses when that makes an OR (so that the AND around it binds as
 * meant), and only then: DynamoDB refuses redundant parentheses.
 */
function anyOf(terms: readonly string[]): string {
  const joined = terms.join(' OR ');
  return joined.includes(' OR ') ? `(${joined})` : joined;
}

/** The item with `id`, read strongly consistent, or `undefined`. */
async function readPlant(id: bigint, dependencies: UpdateDependencies) {
  const { Item } = await callStore(
    (abortSignal) =>
      dependencies.documentClient.send(
        new GetCommand({ TableName: dependencies.tableName, Key: { id }, ConsistentRead: true }),
        { abortSignal },
      ),
    dependencies.deadlineMilliseconds,
  );
  return Item;
}
