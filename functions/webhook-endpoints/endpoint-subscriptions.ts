/**
 * The fan-out's list of who hears what, in the webhook log. Every change writes its entry and
 * counts a change before the answer; the fan-out reads the count (consistently) every batch, so
 * an event after a create's answer always reaches the new endpoint.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditionFailed, sendToStore, updateIf } from '../shared/platform/dynamodb.ts';
import type {
  PlantEventType,
  Subscription,
  WebhookFormat,
} from '../shared/webhooks/plant-events.ts';
import type { SubscriptionSource } from '../shared/webhooks/queue-deliveries.ts';
import { query, type WebhookLogTable as SubscriptionList } from './webhook-log.ts';

/** An endpoint as the fan-out sees it. */
export interface EndpointSubscription {
  readonly id: string;
  readonly owner: string;
  readonly events: readonly PlantEventType[];
  readonly format: WebhookFormat;
  readonly enabled: boolean;
  /** The endpoint's version when this was written: a write only replaces an older one. */
  readonly version: number;
}

const partition = 'subscriptions';
const changesKey = { pk: partition, sk: '#changes' };

const withdrawnKeptSeconds = 24 * 60 * 60;

/** The subscriber name of an endpoint, in messages and logs. */
export function endpointSubscriberName(id: string): string {
  return `endpoint:${id}`;
}

/**
 * Writes the entry unless a newer one is there, then counts a change. An ended endpoint's entry
 * stays a day, so that a late write of an older state cannot bring it back.
 */
export async function publishSubscription(
  subscription: EndpointSubscription,
  list: SubscriptionList,
): Promise<void> {
  const written = await updateIf(list, {
    TableName: list.logTableName,
    Key: { pk: partition, sk: subscription.id },
    UpdateExpression:
      'SET #owner = :owner, events = :events, #format = :format, enabled = :enabled, version = :version' +
      (subscription.enabled ? ' REMOVE expiresAt' : ', expiresAt = :expires'),
    ConditionExpression: 'attribute_not_exists(version) OR version < :version',
    ExpressionAttributeNames: { '#owner': 'owner', '#format': 'format' },
    ExpressionAttributeValues: {
      ':owner': subscription.owner,
      ':events': subscription.events,
      ':format': subscription.format,
      ':enabled': subscription.enabled,
      ':version': subscription.version,
      ...(subscription.enabled
        ? {}
        : { ':expires': Math.ceil(Date.now() / 1000) + withdrawnKeptSeconds }),
    },
  });
  // A newer state is there already: it stands, and it was counted when it was written.
  if (conditionFailed(written)) return;
  await sendToStore(
    list,
    new UpdateCommand({
      TableName: list.logTableName,
      Key: changesKey,
      UpdateExpression: 'ADD changes :one',
      ExpressionAttributeValues: { ':one': 1 },
    }),
  );
}

/** How many changes the list has had. */
async function readChanges(list: SubscriptionList): Promise<number> {
  const { Item } = await sendToStore(
    list,
    new GetCommand({ TableName: list.logTableName, Key: changesKey, ConsistentRead: true }),
  );
  const changes = Item?.changes as { value: string } | number | undefined;
  return Number(typeof changes === 'object' ? changes.value : (changes ?? 0));
}

/** Every endpoint that hears of something now. */
export async function listSubscribedEndpoints(
  list: SubscriptionList,
): Promise<readonly EndpointSubscription[]> {
  const found: EndpointSubscription[] = [];
  for await (const item of query(list, {
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :endpoint)',
    FilterExpression: 'enabled = :true',
    ExpressionAttributeValues: { ':pk': partition, ':endpoint': 'ep_', ':true': true },
  })) {
    found.push({
      id: item.sk as string,
      owner: item.owner as string,
      events: item.events as PlantEventType[],
      format: item.format as WebhookFormat,
      enabled: true,
      version: Number((item.version as { value: string }).value),
    });
  }
  return found;
}

/** The stage's subscriptions, then the endpoints, read again when the list changed; fails loud. */
export function withEndpointSubscriptions(
  stage: readonly Subscription[],
  list: SubscriptionList,
): SubscriptionSource {
  let cached: { readonly changes: number; readonly list: readonly Subscription[] } | undefined;
  return {
    current: async () => {
      const changes = await readChanges(list);
      if (cached === undefined || cached.changes !== changes) {
        const endpoints = (await listSubscribedEndpoints(list)).map(
          ({ id, owner, events, format }) => ({
            name: endpointSubscriberName(id),
            events,
            format,
            endpoint: { id, owner },
          }),
        );
        cached = { changes, list: [...stage, ...endpoints] };
      }
      return cached.list;
    },
  };
}
