/**
 * The endpoints table: each endpoint under its owner, so no client finds another's; reads are
 * strongly consistent. The delivery writes `failingSince` (and a disable) conditionally; a
 * client's changes are in `endpoint-changes.ts`.
 */
import { GetCommand, type NativeAttributeValue, QueryCommand } from '@aws-sdk/lib-dynamodb';
import {
  conditionFailed,
  type StoreDependencies,
  sendToStore,
  updateIf,
} from '../shared/platform/dynamodb.ts';
import type { EndpointRecord } from './endpoint.ts';
import { type EndpointSubscription, publishSubscription } from './endpoint-subscriptions.ts';

/** Where endpoints are stored. */
export type EndpointTable = Omit<StoreDependencies, 'tableName'> & {
  readonly endpointsTableName: string;
};

/** Both stores, for the writes that keep the log's count and list too. */
export type EndpointStores = EndpointTable & { readonly logTableName: string };

export type Item = Record<string, NativeAttributeValue>;

export function itemOf(record: EndpointRecord): Item {
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

export function recordOf(item: Item): EndpointRecord {
  const { endpointId, ...rest } = item;
  return {
    ...(rest as Omit<EndpointRecord, 'id'>),
    id: endpointId as string,
    version: numberOf(item.version) ?? 0,
    previousSecretUntil: numberOf(item.previousSecretUntil),
    failingSince: numberOf(item.failingSince),
  };
}

/** The fan-out's view of an endpoint. */
export function subscriptionOfRecord(record: EndpointRecord): EndpointSubscription {
  const { id, owner, events, format, enabled, version } = record;
  return { id, owner, events, format, enabled, version };
}

/** The owner's endpoint with this id, or `undefined` (none, or another owner's). */
export async function readEndpoint(
  owner: string,
  id: string,
  table: EndpointTable,
): Promise<EndpointRecord | undefined> {
  const Key = { owner, endpointId: id };
  const get = new GetCommand({ TableName: table.endpointsTableName, Key, ConsistentRead: true });
  const { Item } = await sendToStore(table, get);
  return Item === undefined ? undefined : recordOf(Item);
}

/** A page of the owner's endpoints in id (creation) order after `after`, and if more follow. */
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
    const result = await sendToStore(
      table,
      new QueryCommand({
        TableName: table.endpointsTableName,
        KeyConditionExpression: '#owner = :owner',
        ExpressionAttributeNames: { '#owner': 'owner' },
        ExpressionAttributeValues: { ':owner': owner },
        ConsistentRead: true,
        Limit: page.limit + 1 - records.length,
        ExclusiveStartKey: start,
      }),
    );
    records.push(...(result.Items ?? []).map(recordOf));
    start = result.LastEvaluatedKey;
    if (start === undefined) break;
  }
  return { records: records.slice(0, page.limit), more: records.length > page.limit };
}

/**
 * Records an attempt on the endpoint: a delivery ends a run of failures, the first failure starts
 * one, and one `failingLimit` into it disables the endpoint; each a conditional update of those
 * attributes only, so the owner's changes stand. Resolves `'disabled'` when this call disabled it.
 */
export async function recordEndpointHealth(
  record: EndpointRecord,
  outcome: { readonly delivered: boolean; readonly at: number; readonly reason: string },
  failingLimit: number,
  stores: EndpointStores,
): Promise<'disabled' | undefined> {
  const key = { owner: record.owner, endpointId: record.id };
  const update = (expression: string, condition: string, values: Record<string, unknown>) =>
    updateIf(stores, {
      TableName: stores.endpointsTableName,
      Key: key,
      UpdateExpression: expression,
      ConditionExpression: `attribute_exists(endpointId) AND ${condition}`,
      ...(Object.keys(values).length === 0 ? {} : { ExpressionAttributeValues: values }),
    });
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
  const disabled = await update(
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
  // Changed meanwhile (deleted, re-enabled, already disabled): the owner's change stands.
  if (conditionFailed(disabled)) return undefined;
  await publishSubscription({ ...subscriptionOfRecord(record), enabled: false, version }, stores);
  return 'disabled';
}
