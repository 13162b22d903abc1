/**
 * The webhook log (`infra/table-schemas.ts`): every plant event, so an endpoint can `recover` what
 * it missed; every attempt, for its owner (`attempts`); and each event's delivery to each endpoint
 * (`delivery#<endpointId>` / `<webhookId>`: `pending` under one `deliveryId`, `delivered` or
 * `ended`), which a delivery claims before it sends, so at most one is under way. The same table
 * holds the subscription list, the endpoint counts and the call limits. Every item expires 7 days
 * after it was written (TTL `expiresAt`); reads leave out what has expired but is still there.
 */
import {
  BatchGetCommand,
  BatchWriteCommand,
  type NativeAttributeValue,
  PutCommand,
  QueryCommand,
} from '@aws-sdk/lib-dynamodb';
import { readStoredPlant } from '../shared/plants/stored-plant.ts';
import {
  conditionFailed,
  type StoreDependencies,
  sendToStore,
  updateIf,
} from '../shared/platform/dynamodb.ts';
import type { PlantEvent, PlantEventType } from '../shared/webhooks/plant-events.ts';
import type { EventLog } from '../shared/webhooks/queue-deliveries.ts';

/** How long the log keeps events and attempts: 7 days. */
export const keptMilliseconds = 7 * 24 * 60 * 60 * 1000;

/** Where the log is: the plants' store settings, naming the log table. */
export type WebhookLogTable = Omit<StoreDependencies, 'tableName'> & {
  readonly logTableName: string;
};

/** One attempt at an endpoint, as `GET …/attempts` shows it. */
export interface DeliveryAttemptRecord {
  readonly eventId: string;
  readonly type: PlantEventType | 'webhook.test';
  readonly attempt: number;
  readonly outcome: 'delivered' | 'failed';
  /** The endpoint's HTTP status, when it answered. */
  readonly responseStatus?: number;
  readonly durationMilliseconds: number;
  /** Why it failed, in a line (never a secret). */
  readonly failure?: string;
  /** RFC 3339, milliseconds, UTC. */
  readonly attemptedAt: string;
  /** The W3C trace id the attempt's `traceparent` carried (docs/tracing.md), when it had one. */
  readonly traceId?: string;
}

type Item = Record<string, NativeAttributeValue>;

const hourOf = (time: number) => new Date(time).toISOString().slice(0, 13);
const expiry = (time: number) => Math.ceil((time + keptMilliseconds) / 1000);

/** The log as the fan-out keeps events in it. */
export function eventLogOf(table: WebhookLogTable): EventLog {
  return { keep: (events) => keepEvents(events, table) };
}

/** Keeps events (25 to a request, DynamoDB's batch limit; unprocessed ones retried). */
export async function keepEvents(
  events: readonly PlantEvent[],
  table: WebhookLogTable,
): Promise<void> {
  const items = events.map((event) => ({
    pk: `event#${hourOf(event.occurredAt)}`,
    sk: `${new Date(event.occurredAt).toISOString()}#${event.webhookId}`,
    webhookId: event.webhookId,
    type: event.type,
    id: event.id,
    ...(event.plant === undefined
      ? {}
      : {
          name: event.plant.name,
          ...(event.plant.tag === undefined ? {} : { tag: event.plant.tag }),
        }),
    version: event.version,
    occurredAt: event.occurredAt,
    ...(event.traceparent === undefined ? {} : { traceparent: event.traceparent }),
    expiresAt: expiry(event.occurredAt),
  }));
  await writeAll(items, table);
}

/** Events kept from `since` to `until` (ms), oldest first, hour by hour; expired ones left out. */
export async function* eventsBetween(
  since: number,
  until: number,
  table: WebhookLogTable,
): AsyncGenerator<PlantEvent> {
  const now = Date.now();
  for (let hour = Math.floor(since / 3_600_000) * 3_600_000; hour <= until; hour += 3_600_000) {
    for await (const item of query(table, {
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: {
        ':pk': `event#${hourOf(hour)}`,
        ':from': new Date(since).toISOString(),
        ':to': `${new Date(until).toISOString()}~`,
      },
    })) {
      if (Number(item.expiresAt?.value ?? 0) * 1000 <= now) continue;
      yield eventOf(item);
    }
  }
}

function eventOf(item: Item): PlantEvent {
  const type = item.type as PlantEventType;
  const plant = readStoredPlant(item);
  return {
    webhookId: item.webhookId as string,
    type,
    id: BigInt((item.id as { value: string }).value),
    ...(type === 'plant.deleted' || plant === undefined ? {} : { plant }),
    version: Number((item.version as { value: string }).value),
    occurredAt: Number((item.occurredAt as { value: string }).value),
    ...(typeof item.traceparent === 'string' ? { traceparent: item.traceparent } : {}),
  };
}

/** Logs an attempt at an endpoint, and, when it delivered, that the event reached it. */
export async function recordAttempt(
  endpointId: string,
  attempt: DeliveryAttemptRecord,
  table: WebhookLogTable,
): Promise<void> {
  const { attemptedAt, eventId } = attempt;
  const expiresAt = expiry(Date.parse(attemptedAt));
  const sk = `${attemptedAt}#${eventId}#${String(attempt.attempt).padStart(2, '0')}`;
  const items: Item[] = [{ pk: `attempts#${endpointId}`, sk, ...attempt, expiresAt }];
  if (attempt.outcome === 'delivered' && attempt.type !== 'webhook.test') {
    items.push({ pk: `delivery#${endpointId}`, sk: eventId, state: 'delivered', expiresAt });
  }
  await writeAll(items, table);
}

/** Where an event's delivery to an endpoint stands. */
export type DeliveryState =
  | { readonly state: 'delivered' | 'ended' }
  | { readonly state: 'pending'; readonly deliveryId: string; readonly staleAt: number };

/**
 * A pending delivery with no attempt for this long is taken to be lost (its message never came
 * back): another may claim the event. The schedule's longest wait is 10 h.
 */
export const pendingStaleMilliseconds = 12 * 60 * 60 * 1000;

/** How long an attempt holds its claim against a copy of its message: the function's timeout. */
export const attemptHoldMilliseconds = 30_000;

/**
 * Claims the event's delivery to the endpoint for `deliveryId`'s `attempt` (a recover's is 0),
 * unless another delivery holds it (till stale), it was delivered, or a copy of this message (SQS
 * delivers at least once) holds this attempt or made a later one; stale `holdMilliseconds` on.
 */
export async function claimDelivery(
  endpointId: string,
  webhookId: string,
  deliveryId: string,
  now: number,
  table: WebhookLogTable,
  { holdMilliseconds = pendingStaleMilliseconds, attempt = 0 } = {},
): Promise<'claimed' | 'delivered' | { readonly pendingUntil: number }> {
  const claim = await updateIf(table, {
    TableName: table.logTableName,
    Key: { pk: `delivery#${endpointId}`, sk: webhookId },
    UpdateExpression:
      'SET #state = :pending, deliveryId = :id, claimedAt = :now, staleAt = :staleAt, expiresAt = :expires, #attempt = :attempt, attemptEndsAt = :attemptEndsAt',
    // A claim written before claims had `staleAt` is stale 12 h after `claimedAt`.
    ConditionExpression:
      'attribute_not_exists(#state) OR #state = :ended OR (#state = :pending AND (staleAt < :now OR claimedAt < :stale OR (deliveryId = :id AND (attribute_not_exists(#attempt) OR #attempt < :attempt OR (#attempt = :attempt AND attemptEndsAt < :now)))))',
    ExpressionAttributeNames: { '#state': 'state', '#attempt': 'attempt' },
    ExpressionAttributeValues: {
      ':pending': 'pending',
      ':ended': 'ended',
      ':id': deliveryId,
      ':now': now,
      ':stale': now - pendingStaleMilliseconds,
      ':staleAt': now + holdMilliseconds,
      ':expires': expiry(now),
      ':attempt': attempt,
      ':attemptEndsAt': now + attemptHoldMilliseconds,
    },
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  });
  if (!conditionFailed(claim)) return 'claimed';
  const held = claim.item;
  if (held?.state?.S === 'delivered') return 'delivered';
  const holding = held?.deliveryId?.S === deliveryId && Number(held.attempt?.N) === attempt;
  if (holding) return { pendingUntil: Number(held.attemptEndsAt?.N) };
  const staleAt = Number(held?.staleAt?.N ?? Number.NaN);
  const claimedAt = Number(held?.claimedAt?.N ?? 0);
  return { pendingUntil: Number.isNaN(staleAt) ? claimedAt + pendingStaleMilliseconds : staleAt };
}

/**
 * Ends `deliveryId`'s claim without a delivery (dead-lettered, or no longer to be sent), so a
 * `recover` may queue the event again. Nothing changes if another delivery holds the claim, nor,
 * given `claimedAt`, if the claim was renewed since (its delivery is under way).
 */
export async function endDelivery(
  endpointId: string,
  webhookId: string,
  deliveryId: string,
  table: WebhookLogTable,
  claimedAt?: number,
): Promise<void> {
  // Another delivery holds the claim when the condition fails: nothing to end.
  await updateIf(table, {
    TableName: table.logTableName,
    Key: { pk: `delivery#${endpointId}`, sk: webhookId },
    UpdateExpression: 'SET #state = :ended REMOVE deliveryId, claimedAt, staleAt',
    ConditionExpression:
      claimedAt === undefined
        ? '#state = :pending AND deliveryId = :id'
        : '#state = :pending AND deliveryId = :id AND claimedAt = :claimedAt',
    ExpressionAttributeNames: { '#state': 'state' },
    ExpressionAttributeValues: {
      ':pending': 'pending',
      ':ended': 'ended',
      ':id': deliveryId,
      ...(claimedAt === undefined ? {} : { ':claimedAt': claimedAt }),
    },
  });
}

/** Where each of `eventIds` stands at the endpoint (100 to a request, DynamoDB's batch limit). */
export async function deliveryStates(
  endpointId: string,
  eventIds: readonly string[],
  table: WebhookLogTable,
): Promise<ReadonlyMap<string, DeliveryState>> {
  const states = new Map<string, DeliveryState>();
  const unique = [...new Set(eventIds)];
  for (let start = 0; start < unique.length; start += 100) {
    let keys: Item[] | undefined = unique
      .slice(start, start + 100)
      .map((eventId) => ({ pk: `delivery#${endpointId}`, sk: eventId }));
    while (keys !== undefined && keys.length > 0) {
      const requested: Item[] = keys;
      const request = { [table.logTableName]: { Keys: requested, ConsistentRead: true } };
      const result = await sendToStore(table, new BatchGetCommand({ RequestItems: request }));
      for (const item of result.Responses?.[table.logTableName] ?? []) {
        states.set(item.sk as string, stateOf(item));
      }
      keys = result.UnprocessedKeys?.[table.logTableName]?.Keys;
    }
  }
  return states;
}

function stateOf(item: Item): DeliveryState {
  if (item.state === 'pending') {
    const number = (value: unknown) => Number((value as { value: string }).value);
    return {
      state: 'pending',
      deliveryId: item.deliveryId as string,
      staleAt:
        item.staleAt === undefined
          ? number(item.claimedAt) + pendingStaleMilliseconds
          : number(item.staleAt),
    };
  }
  return { state: item.state === 'ended' ? 'ended' : 'delivered' };
}

/** A page of the endpoint's attempts, newest first, after the cursor `after` (an item's key). */
export async function listAttempts(
  endpointId: string,
  page: { readonly limit: number; readonly after?: string },
  table: WebhookLogTable,
): Promise<{ readonly attempts: readonly DeliveryAttemptRecord[]; readonly last?: string }> {
  const attempts: { sk: string; attempt: DeliveryAttemptRecord }[] = [];
  const now = Math.floor(Date.now() / 1000);
  for await (const item of query(
    table,
    {
      KeyConditionExpression: 'pk = :pk',
      FilterExpression: 'expiresAt > :now',
      ExpressionAttributeValues: { ':pk': `attempts#${endpointId}`, ':now': now },
      ScanIndexForward: false,
      ...(page.after === undefined
        ? {}
        : { ExclusiveStartKey: { pk: `attempts#${endpointId}`, sk: page.after } }),
    },
    page.limit + 1,
  )) {
    attempts.push({ sk: item.sk as string, attempt: attemptOf(item) });
    if (attempts.length > page.limit) break;
  }
  const shown = attempts.slice(0, page.limit);
  return {
    attempts: shown.map((entry) => entry.attempt),
    ...(attempts.length > page.limit ? { last: shown.at(-1)?.sk as string } : {}),
  };
}

function attemptOf(item: Item): DeliveryAttemptRecord {
  const number = (value: unknown) => Number((value as { value: string }).value);
  return {
    eventId: item.eventId as string,
    type: item.type as DeliveryAttemptRecord['type'],
    attempt: number(item.attempt),
    outcome: item.outcome as DeliveryAttemptRecord['outcome'],
    responseStatus: item.responseStatus === undefined ? undefined : number(item.responseStatus),
    durationMilliseconds: number(item.durationMilliseconds),
    failure: item.failure as string | undefined,
    attemptedAt: item.attemptedAt as string,
    traceId: item.traceId as string | undefined,
  };
}

/** The items of a query of the log, page by page (`pageSize` items a request when given). */
export async function* query(
  table: WebhookLogTable,
  input: Omit<ConstructorParameters<typeof QueryCommand>[0], 'TableName'>,
  pageSize?: number,
): AsyncGenerator<Item> {
  let start = input.ExclusiveStartKey;
  do {
    const page = await sendToStore(
      table,
      new QueryCommand({
        ...input,
        TableName: table.logTableName,
        ConsistentRead: true,
        Limit: pageSize,
        ExclusiveStartKey: start,
      }),
    );
    yield* page.Items ?? [];
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
}

/** Writes items 25 to a request, retrying what DynamoDB left unprocessed. */
async function writeAll(items: readonly Item[], table: WebhookLogTable): Promise<void> {
  if (items.length === 1) {
    const put = new PutCommand({ TableName: table.logTableName, Item: items[0] as Item });
    await sendToStore(table, put);
    return;
  }
  for (let start = 0; start < items.length; start += 25) {
    let requests = items.slice(start, start + 25).map((Item) => ({ PutRequest: { Item } }));
    while (requests.length > 0) {
      const pending = requests;
      const batch = new BatchWriteCommand({ RequestItems: { [table.logTableName]: pending } });
      const { UnprocessedItems } = await sendToStore(table, batch);
      requests = (UnprocessedItems?.[table.logTableName] ?? []) as typeof requests;
    }
  }
}
