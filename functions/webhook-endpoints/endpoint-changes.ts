/**
 * The changes a client makes to its endpoints, each writing only its own attributes under a
 * condition, so concurrent changes all stand; the owner's count changes in the same transaction,
 * and who hears what reaches the fan-out's list before the answer.
 */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { endpointErrorCodes } from '../shared/errors/error-codes.ts';
import { ApiError } from '../shared/errors/errors.ts';
import { conditionFailed, sendToStore, updateIf } from '../shared/platform/dynamodb.ts';
import { type EndpointRecord, maxEndpointsPerOwner } from './endpoint.ts';
import {
  type EndpointStores,
  type EndpointTable,
  itemOf,
  readEndpoint,
  recordOf,
  subscriptionOfRecord,
} from './endpoint-store.ts';
import { publishSubscription } from './endpoint-subscriptions.ts';

/** The owner's count of endpoints, in the webhook log. */
const countKey = (owner: string) => ({ pk: `owner#${owner}`, sk: 'endpoints' });

type TransactItem = NonNullable<
  ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']
>[number];

/** A transaction, again after a conflict: the SDK does not retry a cancelled transaction. */
async function transact(stores: EndpointStores, items: TransactItem[]): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await sendToStore(stores, new TransactWriteCommand({ TransactItems: items }));
      return;
    } catch (error) {
      if (!cancellationCodes(error)?.includes('TransactionConflict') || attempt === 8) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * 2 ** attempt));
    }
  }
}

/** Why a transaction was cancelled, item by item (`None` for those that were fine). */
function cancellationCodes(error: unknown): readonly (string | undefined)[] | undefined {
  return error instanceof TransactionCanceledException
    ? (error.CancellationReasons ?? []).map((reason) => reason.Code)
    : undefined;
}

/**
 * Stores and counts a new endpoint (and keeps the answer to its `Idempotency-Key`, when given one),
 * then publishes it. @throws ApiError 40029 at the owner's limit, 40901 when the key has an answer
 */
export async function putNewEndpoint(
  record: EndpointRecord,
  stores: EndpointStores,
  keptAnswer?: TransactItem,
) {
  try {
    await transact(stores, [
      {
        Update: {
          TableName: stores.logTableName,
          Key: countKey(record.owner),
          UpdateExpression: 'ADD endpoints :one',
          ConditionExpression: 'attribute_not_exists(endpoints) OR endpoints < :most',
          ExpressionAttributeValues: { ':one': 1, ':most': maxEndpointsPerOwner },
        },
      },
      {
        Put: {
          TableName: stores.endpointsTableName,
          Item: itemOf(record),
          ConditionExpression: 'attribute_not_exists(endpointId)',
        },
      },
      ...(keptAnswer === undefined ? [] : [keptAnswer]),
    ]);
  } catch (error) {
    const codes = cancellationCodes(error);
    if (codes?.[0] === 'ConditionalCheckFailed') {
      throw new ApiError(
        endpointErrorCodes.endpointLimitReached,
        `This client has ${maxEndpointsPerOwner} webhook endpoints, the most it may have; delete one first.`,
      );
    }
    if (codes?.[2] === 'ConditionalCheckFailed') {
      throw new ApiError(endpointErrorCodes.idempotencyKeyInUse, undefined, {
        retryAfterSeconds: 1,
      });
    }
    throw error;
  }
  await publishSubscription(subscriptionOfRecord(record), stores);
}

const changedAttributes = [
  'url',
  'events',
  'format',
  'description',
  'enabled',
  'disabledReason',
  'failingSince',
  'version',
] as const;

/** The attributes a `PATCH` owns (and `failingSince`); `undefined` ones are removed. */
export type EndpointChange = Pick<EndpointRecord, (typeof changedAttributes)[number]>;

/** Writes and publishes a `PATCH` if the endpoint is at `current`'s version, else `undefined`. */
export async function changeEndpoint(
  current: EndpointRecord,
  change: EndpointChange,
  stores: EndpointStores,
): Promise<EndpointRecord | undefined> {
  const set = changedAttributes.filter((name) => change[name] !== undefined);
  const removed = changedAttributes.filter((name) => change[name] === undefined);
  const result = await updateIf(stores, {
    TableName: stores.endpointsTableName,
    Key: { owner: current.owner, endpointId: current.id },
    UpdateExpression: [
      `SET ${set.map((name) => `#${name} = :${name}`).join(', ')}`,
      removed.length === 0 ? '' : `REMOVE ${removed.map((name) => `#${name}`).join(', ')}`,
    ].join(' '),
    ConditionExpression: '#version = :expected',
    ExpressionAttributeNames: Object.fromEntries(
      changedAttributes.map((name) => [`#${name}`, name]),
    ),
    ExpressionAttributeValues: {
      ...Object.fromEntries(set.map((name) => [`:${name}`, change[name]])),
      ':expected': current.version,
    },
    ReturnValues: 'ALL_NEW',
  });
  if (conditionFailed(result)) return undefined;
  const changed = recordOf(result.Attributes ?? {});
  await publishSubscription(subscriptionOfRecord(changed), stores);
  return changed;
}

/** A rotation's write, if the endpoint still exists; resolves whether it did. */
export async function rotateEndpointSecret(
  current: EndpointRecord,
  rotated: { readonly secret: string; readonly previousSecretUntil?: number },
  table: EndpointTable,
): Promise<boolean> {
  const keepsPrevious = rotated.previousSecretUntil !== undefined;
  // The secret stored when the write lands becomes the previous one (an update expression reads
  // the item as it was), so concurrent rotations all land, one after another, each one's secret
  // signing until the overlap of the next ends; one with no overlap revokes every earlier secret,
  // one a racing rotation has just answered included (it is for a secret that leaked).
  const result = await updateIf(table, {
    TableName: table.endpointsTableName,
    Key: { owner: current.owner, endpointId: current.id },
    UpdateExpression: keepsPrevious
      ? 'SET previousSecret = secret, secret = :secret, previousSecretUntil = :until'
      : 'SET secret = :secret REMOVE previousSecret, previousSecretUntil',
    ConditionExpression: 'attribute_exists(endpointId)',
    ExpressionAttributeValues: {
      ':secret': rotated.secret,
      ...(keepsPrevious ? { ':until': rotated.previousSecretUntil } : {}),
    },
  });
  return !conditionFailed(result);
}

/** Deletes and uncounts an endpoint if still at its version, then withdraws it from the fan-out. */
export async function deleteEndpoint(
  record: EndpointRecord,
  stores: EndpointStores,
): Promise<'deleted' | 'missing' | 'changed'> {
  try {
    await transact(stores, [
      {
        Delete: {
          TableName: stores.endpointsTableName,
          Key: { owner: record.owner, endpointId: record.id },
          ConditionExpression: 'attribute_exists(endpointId) AND version = :version',
          ExpressionAttributeValues: { ':version': record.version },
        },
      },
      {
        Update: {
          TableName: stores.logTableName,
          Key: countKey(record.owner),
          UpdateExpression: 'ADD endpoints :minusOne',
          ExpressionAttributeValues: { ':minusOne': -1 },
        },
      },
    ]);
  } catch (error) {
    if (cancellationCodes(error)?.[0] === 'ConditionalCheckFailed') {
      const found = await readEndpoint(record.owner, record.id, stores);
      return found === undefined ? 'missing' : 'changed';
    }
    throw error;
  }
  const version = record.version + 1;
  await publishSubscription({ ...subscriptionOfRecord(record), enabled: false, version }, stores);
  return 'deleted';
}
