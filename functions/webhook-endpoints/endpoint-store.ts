/**
 * The endpoints table (`infra/table-schemas.ts`): one item per endpoint under its owner, so every
 * read, list and change a client makes names its own partition and another client's endpoint is
 * not found. Reads are strongly consistent: a delete, a disable or a new URL counts at once.
 *
 * Every writer changes only its own attributes, conditionally, so concurrent changes all stand:
 * a change of what the API shows (`PATCH`) is conditioned on the version it read; a rotation
 * writes the secrets only, conditioned on the secret it replaces; the delivery's bookkeeping
 * writes `failingSince` (and, when it disables the endpoint, `enabled` and the version).
 *
 * A create and a delete also keep the owner's count in the webhook log, in one transaction with
 * the endpoint, so the 50-endpoint limit holds however many creates race; and every change of who
 * hears what is written to the fan-out's subscription list (`endpoint-subscriptions.ts`) before
 * it is answered.
 */
import {
  ConditionalCheckFailedException,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import {
  GetCommand,
  type NativeAttributeValue,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { callStore, type StoreDependencies } from '../shared/platform/dynamodb.ts';
import { type EndpointRecord, maxEndpointsPerOwner } from './endpoint.ts';
import { type EndpointSubscription, publishSubscription } from './endpoint-subscriptions.ts';

/** Where endpoints are stored: the plants' store settings, naming the endpoints table. */
export type EndpointTable = Omit<StoreDependencies, 'tableName'> & {
  readonly endpointsTableName: string;
};

/** Both stores, for the writes that keep the log's count and subscription list too. */
export type EndpointStores = EndpointTable & { readonly logTableName: string };

type Item = Record<string, NativeAttributeValue>;

/** A create refused because the owner has as many endpoints as it may. */
export class EndpointLimitError extends Error {
  override readonly name = 'EndpointLimitError';
}

function itemOf(record: EndpointRecord): Item {
  const { id, ...rest } = record;
  return { ...rest, endpointId: id };
}

/** A number read with `wrapNumbers` (its exact text) or written plain. */
function numberOf(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  return Number(
    typeof value === 'object' && value !== null ? (value as { value: string }).value : value,
  );
}

function recordOf(item: Item): EndpointRecord {
  const { endpointId, ...rest } = item;
  const previousSecretUntil = numberOf(item.previousSecretUntil);
  const failingSince = numberOf(item.failingSince);
  return {
    ...(rest as Omit<EndpointRecord, 'id'>),
    id: endpointId as string,
    version: numberOf(item.version) ?? 0,
    ...(previousSecretUntil === undefined ? {} : { previousSecretUntil }),
    ...(failingSince === undefined ? {} : { failingSince }),
  };
}

/** The fan-out's view of an endpoint. */
export function subscriptionOfRecord(record: EndpointRecord): EndpointSubscription {
  return {
    id: record.id,
    owner: record.owner,
    events: record.events,
    format: record.format,
    enabled: record.enabled,
    version: record.version,
  };
}

/** The owner's count of endpoints, in the webhook log. */
const countKey = (owner: string) => ({ pk: `owner#${owner}`, sk: 'endpoints' });

/**
 * Runs a transaction, again after a conflict with another (two creates of one owner at once):
 * DynamoDB cancels one of them, and the SDK does not retry a cancelled transaction.
 */
async function transact(
  stores: EndpointStores,
  items: ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems'],
): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await callStore(
        (abortSignal) =>
          stores.documentClient.send(new TransactWriteCommand({ TransactItems: items }), {
            abortSignal,
          }),
        stores.deadlineMilliseconds,
      );
      return;
    } catch (error) {
      const conflict =
        error instanceof TransactionCanceledException &&
        (error.CancellationReasons ?? []).some((reason) => reason.Code === 'TransactionConflict');
      if (!conflict || attempt === 8) throw error;
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
 * Stores a new endpoint (its id is new) and counts it for its owner, in one transaction, then
 * publishes it to the fan-out.
 * @throws EndpointLimitError when the owner already has {@link maxEndpointsPerOwner}.
 */
export async function putNewEndpoint(record: EndpointRecord, stores: EndpointStores) {
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
    ]);
  } catch (error) {
    if (cancellationCodes(error)?.[0] === 'ConditionalCheckFailed') {
      throw new EndpointLimitError(`The owner has ${maxEndpointsPerOwner} endpoints.`);
    }
    throw error;
  }
  await publishSubscription(subscriptionOfRecord(record), stores);
}

/** The owner's endpoint with this id, or `undefined` (none, or another owner's). */
export async function readEndpoint(
  owner: string,
  id: string,
  table: EndpointTable,
): Promise<EndpointRecord | undefined> {
  const { Item } = await callStore(
    (abortSignal) =>
      table.documentClient.send(
        new GetCommand({
          TableName: table.endpointsTableName,
          Key: { owner, endpointId: id },
          ConsistentRead: true,
        }),
        { abortSignal },
      ),
    table.deadlineMilliseconds,
  );
  return Item === undefined ? undefined : recordOf(Item);
}

/** A page of the owner's endpoints in id (creation) order, after `after`, and whether more follow. */
export async function listEndpoints(
  owner: string,
  page: { readonly limit: number; readonly after?: string },
  table: EndpointTable,
): Promise<{ readonly records: readonly EndpointRecord[]; readonly more: boolean }> {
  const records: EndpointRecord[] = [];
  let start: Item | undefined =
    page.after === undefined ? undefined : { owner, endpointId: page.after };
  // One more than asked: the next link is given only when another endpoint follows.
  while (records.length <= page.limit) {
    const result = await callStore(
      (abortSignal) =>
        table.documentClient.send(
          new QueryCommand({
            TableName: table.endpointsTableName,
            KeyConditionExpression: '#owner = :owner',
            ExpressionAttributeNames: { '#owner': 'owner' },
            ExpressionAttributeValues: { ':owner': owner },
            ConsistentRead: true,
            Limit: page.limit + 1 - records.length,
            ...(start === undefined ? {} : { ExclusiveStartKey: start }),
          }),
          { abortSignal },
        ),
      table.deadlineMilliseconds,
    );
    records.push(...(result.Items ?? []).map(recordOf));
    start = result.LastEvaluatedKey;
    if (start === undefined) break;
  }
  return { records: records.slice(0, page.limit), more: records.length > page.limit };
}

/**
 * The attributes a `PATCH` owns: what the API shows, and `failingSince`, which re-enabling
 * clears. Absent (`undefined`) ones are removed.
 */
export type EndpointChange = Pick<
  EndpointRecord,
  'url' | 'events' | 'format' | 'description' | 'enabled' | 'disabledReason' | 'failingSince'
> & { readonly version: number };

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

/**
 * Writes a `PATCH`'s attributes if the endpoint still has the version the change was made from,
 * then publishes who it has become to the fan-out. Resolves the changed record, or `undefined`
 * when it changed meanwhile (or was deleted): the rotation's and the delivery's attributes are
 * left as they are.
 */
export async function changeEndpoint(
  current: EndpointRecord,
  change: EndpointChange,
  stores: EndpointStores,
): Promise<EndpointRecord | undefined> {
  const set = changedAttributes.filter((name) => change[name] !== undefined);
  const removed = changedAttributes.filter((name) => change[name] === undefined);
  try {
    const { Attributes } = await callStore(
      (abortSignal) =>
        stores.documentClient.send(
          new UpdateCommand({
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
          }),
          { abortSignal },
        ),
      stores.deadlineMilliseconds,
    );
    const changed = recordOf(Attributes ?? {});
    await publishSubscription(subscriptionOfRecord(changed), stores);
    return changed;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
}

/**
 * A rotation's write: the new sealed secret, and the one it replaces while deliveries still
 * carry it (none, for an immediate rotation), if the secret is still the one rotated out.
 * Resolves whether it was.
 */
export async function rotateEndpointSecret(
  current: EndpointRecord,
  rotated: { readonly secret: string; readonly previousSecretUntil?: number },
  table: EndpointTable,
): Promise<boolean> {
  const keepsPrevious = rotated.previousSecretUntil !== undefined;
  try {
    await callStore(
      (abortSignal) =>
        table.documentClient.send(
          new UpdateCommand({
            TableName: table.endpointsTableName,
            Key: { owner: current.owner, endpointId: current.id },
            UpdateExpression: keepsPrevious
              ? 'SET secret = :secret, previousSecret = :previous, previousSecretUntil = :until'
              : 'SET secret = :secret REMOVE previousSecret, previousSecretUntil',
            ConditionExpression: 'secret = :previous',
            ExpressionAttributeValues: {
              ':secret': rotated.secret,
              ':previous': current.secret,
              ...(keepsPrevious ? { ':until': rotated.previousSecretUntil } : {}),
            },
          }),
          { abortSignal },
        ),
      table.deadlineMilliseconds,
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

/**
 * Deletes the owner's endpoint, at `version` when the request named one (`If-Match`), and
 * uncounts it, in one transaction; then withdraws it from the fan-out. Resolves `'deleted'`,
 * `'missing'` (none) or `'changed'` (not at that version).
 */
export async function deleteEndpoint(
  record: EndpointRecord,
  stores: EndpointStores,
  options: { readonly atVersion?: number } = {},
): Promise<'deleted' | 'missing' | 'changed'> {
  try {
    await transact(stores, [
      {
        Delete: {
          TableName: stores.endpointsTableName,
          Key: { owner: record.owner, endpointId: record.id },
          ConditionExpression:
            options.atVersion === undefined
              ? 'attribute_exists(endpointId)'
              : 'attribute_exists(endpointId) AND version = :version',
          ...(options.atVersion === undefined
            ? {}
            : { ExpressionAttributeValues: { ':version': options.atVersion } }),
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
      return (await readEndpoint(record.owner, record.id, stores)) === undefined
        ? 'missing'
        : 'changed';
    }
    throw error;
  }
  await publishSubscription(
    { ...subscriptionOfRecord(record), enabled: false, version: record.version + 1 },
    stores,
  );
  return 'deleted';
}

/**
 * Records an attempt's outcome on the endpoint: a delivery ends a run of failures; the first
 * failure after a delivery starts one; a failure `failingLimit` or more after the run began
 * disables the endpoint with `reason`. Each is a conditional update of those attributes only,
 * so a change the owner makes meanwhile is kept. Resolves `'disabled'` when this call disabled it.
 */
export async function recordEndpointHealth(
  record: EndpointRecord,
  outcome: { readonly delivered: boolean; readonly at: number; readonly reason: string },
  failingLimit: number,
  stores: EndpointStores,
): Promise<'disabled' | undefined> {
  const key = { owner: record.owner, endpointId: record.id };
  const update = (
    expression: string,
    condition: string,
    values: Record<string, NativeAttributeValue>,
  ) =>
    callStore(
      (abortSignal) =>
        stores.documentClient.send(
          new UpdateCommand({
            TableName: stores.endpointsTableName,
            Key: key,
            UpdateExpression: expression,
            ConditionExpression: `attribute_exists(endpointId) AND ${condition}`,
            ...(Object.keys(values).length === 0 ? {} : { ExpressionAttributeValues: values }),
          }),
          { abortSignal },
        ),
      stores.deadlineMilliseconds,
    );
  try {
    if (outcome.delivered) {
      if (record.failingSince !== undefined) {
        await update('REMOVE failingSince', 'attribute_exists(failingSince)', {});
      }
      return undefined;
    }
    if (record.failingSince === undefined) {
      await update('SET failingSince = :at', 'attribute_not_exists(failingSince)', {
        ':at': outcome.at,
      });
      return undefined;
    }
    if (!record.enabled || outcome.at - record.failingSince < failingLimit) return undefined;
    const version = Math.max(record.version + 1, outcome.at * 1000);
    await update(
      'SET enabled = :false, disabledReason = :reason, version = :version',
      'enabled = :true AND failingSince = :since',
      {
        ':false': false,
        ':true': true,
        ':reason': outcome.reason,
        ':version': version,
        ':since': record.failingSince,
      },
    );
    await publishSubscription({ ...subscriptionOfRecord(record), enabled: false, version }, stores);
    return 'disabled';
  } catch (error) {
    // Changed meanwhile (deleted, re-enabled, already disabled): the owner's change stands.
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
}
