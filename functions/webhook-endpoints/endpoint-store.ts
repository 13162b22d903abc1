/**
 * The endpoints table (`infra/table-schemas.ts`): one item per endpoint under its owner, so every
 * read, list and change a client makes names its own partition and another client's endpoint is
 * not found. Reads are strongly consistent: a delete, a disable or a new URL counts at once.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  GetCommand,
  type NativeAttributeValue,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { callStore, type StoreDependencies } from '../shared/platform/dynamodb.ts';
import type { PlantEventType, WebhookFormat } from '../shared/webhooks/plant-events.ts';
import type { EndpointRecord } from './endpoint.ts';

/** Where endpoints are stored: the plants' store settings, naming the endpoints table. */
export type EndpointTable = Omit<StoreDependencies, 'tableName'> & {
  readonly endpointsTableName: string;
};

/** What the fan-out needs of an enabled endpoint to address its events. */
export interface SubscribedEndpoint {
  readonly id: string;
  readonly owner: string;
  readonly events: readonly PlantEventType[];
  readonly format: WebhookFormat;
}

type Item = Record<string, NativeAttributeValue>;

/** The endpoint's item: its record, and `subscribedId` (the fan-out's index) while enabled. */
function itemOf(record: EndpointRecord): Item {
  const { id, ...rest } = record;
  return { ...rest, endpointId: id, ...(record.enabled ? { subscribedId: id } : {}) };
}

/** A number read with `wrapNumbers` (its exact text) or written plain. */
function numberOf(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  return Number(
    typeof value === 'object' && value !== null ? (value as { value: string }).value : value,
  );
}

function recordOf(item: Item): EndpointRecord {
  const { endpointId, subscribedId: _index, ...rest } = item;
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

/** Stores a new endpoint (its id is new: never overwrites). */
export async function putNewEndpoint(record: EndpointRecord, table: EndpointTable): Promise<void> {
  await callStore(
    (abortSignal) =>
      table.documentClient.send(
        new PutCommand({
          TableName: table.endpointsTableName,
          Item: itemOf(record),
          ConditionExpression: 'attribute_not_exists(endpointId)',
        }),
        { abortSignal },
      ),
    table.deadlineMilliseconds,
  );
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

/** How many endpoints the owner has. */
export async function countEndpoints(owner: string, table: EndpointTable): Promise<number> {
  let count = 0;
  let start: Item | undefined;
  do {
    const page = await callStore(
      (abortSignal) =>
        table.documentClient.send(
          new QueryCommand({
            TableName: table.endpointsTableName,
            KeyConditionExpression: '#owner = :owner',
            ExpressionAttributeNames: { '#owner': 'owner' },
            ExpressionAttributeValues: { ':owner': owner },
            Select: 'COUNT',
            ...(start === undefined ? {} : { ExclusiveStartKey: start }),
          }),
          { abortSignal },
        ),
      table.deadlineMilliseconds,
    );
    count += page.Count ?? 0;
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return count;
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
 * Replaces the endpoint with `record` if it is still as the caller read it: the same version (a
 * change of what the API shows), or the same sealed secret (a rotation, which shows nothing and
 * keeps the version). Resolves `false` when it is not (changed meanwhile, or deleted).
 */
export async function replaceEndpoint(
  record: EndpointRecord,
  expected: { readonly version: number } | { readonly secret: string },
  table: EndpointTable,
): Promise<boolean> {
  const [attribute, value] =
    'version' in expected ? ['version', expected.version] : ['secret', expected.secret];
  try {
    await callStore(
      (abortSignal) =>
        table.documentClient.send(
          new PutCommand({
            TableName: table.endpointsTableName,
            Item: itemOf(record),
            ConditionExpression: '#expected = :expected',
            ExpressionAttributeNames: { '#expected': attribute },
            ExpressionAttributeValues: { ':expected': value },
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

/** Deletes the owner's endpoint; resolves whether there was one. */
export async function deleteEndpoint(
  owner: string,
  id: string,
  table: EndpointTable,
): Promise<boolean> {
  const { Attributes } = await callStore(
    (abortSignal) =>
      table.documentClient.send(
        new DeleteCommand({
          TableName: table.endpointsTableName,
          Key: { owner, endpointId: id },
          ReturnValues: 'ALL_OLD',
        }),
        { abortSignal },
      ),
    table.deadlineMilliseconds,
  );
  return Attributes !== undefined;
}

/** Every enabled endpoint, from the sparse `subscriptions` index (what the fan-out addresses). */
export async function listSubscribedEndpoints(
  table: EndpointTable,
): Promise<readonly SubscribedEndpoint[]> {
  const found: SubscribedEndpoint[] = [];
  let start: Item | undefined;
  do {
    const page = await callStore(
      (abortSignal) =>
        table.documentClient.send(
          new ScanCommand({
            TableName: table.endpointsTableName,
            IndexName: 'subscriptions',
            ...(start === undefined ? {} : { ExclusiveStartKey: start }),
          }),
          { abortSignal },
        ),
      table.deadlineMilliseconds,
    );
    for (const item of page.Items ?? []) {
      found.push({
        id: item.endpointId as string,
        owner: item.owner as string,
        events: item.events as PlantEventType[],
        format: item.format as WebhookFormat,
      });
    }
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return found;
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
  table: EndpointTable,
): Promise<'disabled' | undefined> {
  const key = { owner: record.owner, endpointId: record.id };
  const update = (
    expression: string,
    condition: string,
    values: Record<string, NativeAttributeValue>,
  ) =>
    callStore(
      (abortSignal) =>
        table.documentClient.send(
          new UpdateCommand({
            TableName: table.endpointsTableName,
            Key: key,
            UpdateExpression: expression,
            ConditionExpression: `attribute_exists(endpointId) AND ${condition}`,
            ...(Object.keys(values).length === 0 ? {} : { ExpressionAttributeValues: values }),
          }),
          { abortSignal },
        ),
      table.deadlineMilliseconds,
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
    await update(
      'SET enabled = :false, disabledReason = :reason, version = :version REMOVE subscribedId',
      'enabled = :true AND failingSince = :since',
      {
        ':false': false,
        ':true': true,
        ':reason': outcome.reason,
        ':version': Math.max(record.version + 1, outcome.at * 1000),
        ':since': record.failingSince,
      },
    );
    return 'disabled';
  } catch (error) {
    // Changed meanwhile (deleted, re-enabled, already disabled): the owner's change stands.
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
}
