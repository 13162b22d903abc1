/**
 * The key schema and stream of every DynamoDB table, written once: the stack's tables and the
 * tables `npm start` and the tests make in DynamoDB Local are both built from these.
 *
 * Plain data (no aws-cdk-lib): `local/` imports it.
 */

/** A key attribute: its name and type. */
export interface KeyAttribute {
  readonly name: string;
  readonly type: 'S' | 'N';
}

/** A DynamoDB table's shape, in the words of the DynamoDB API. */
export interface TableSchema {
  readonly partitionKey: KeyAttribute;
  readonly sortKey?: KeyAttribute;
  /** The stream's view type, when the table has a stream. */
  readonly stream?: 'NEW_IMAGE' | 'OLD_IMAGE' | 'NEW_AND_OLD_IMAGES' | 'KEYS_ONLY';
  readonly globalSecondaryIndexes?: readonly {
    readonly name: string;
    readonly partitionKey: KeyAttribute;
    readonly sortKey?: KeyAttribute;
    /** The attributes it holds besides the keys. */
    readonly include: readonly string[];
  }[];
  /** The attribute holding an item's expiry, in seconds since the epoch (DynamoDB's TTL). */
  readonly timeToLiveAttribute?: string;
}

/**
 * The plants: one item per plant, keyed by its `id` (a Number holds any int64 exactly). Its
 * stream carries new and old images: every change feeds the webhooks, and a removed plant's
 * version is only in its old image.
 */
export const plantsTableSchema = {
  partitionKey: { name: 'id', type: 'N' },
  stream: 'NEW_AND_OLD_IMAGES',
} as const satisfies TableSchema;

/**
 * The webhook endpoints clients registered, keyed by their owner (the token's subject) and id:
 * a client's reads and lists name its own partition, so another client's endpoint is simply not
 * found.
 */
export const webhookEndpointsTableSchema = {
  partitionKey: { name: 'owner', type: 'S' },
  sortKey: { name: 'endpointId', type: 'S' },
} as const satisfies TableSchema;

/**
 * The webhook log (`functions/webhook-endpoints/webhook-log.ts`): the events (by hour), each
 * endpoint's attempts and where each event's delivery to it stands, kept 7 days (TTL
 * `expiresAt`), so that `recover` and `attempts` can answer; and what must be read strongly
 * consistently, which an index cannot be: the fan-out's list of who hears what, each owner's
 * count of endpoints, and the endpoints' call limits.
 */
export const webhookLogTableSchema = {
  partitionKey: { name: 'pk', type: 'S' },
  sortKey: { name: 'sk', type: 'S' },
  timeToLiveAttribute: 'expiresAt',
} as const satisfies TableSchema;
