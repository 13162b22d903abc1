/** Every table's keys and stream, for the stack and for DynamoDB Local alike. Plain data. */

export interface KeyAttribute {
  readonly name: string;
  readonly type: 'S' | 'N';
}

/** A table's shape, in the words of the DynamoDB API. */
export interface TableSchema {
  readonly partitionKey: KeyAttribute;
  readonly sortKey?: KeyAttribute;
  readonly stream?: 'NEW_IMAGE' | 'OLD_IMAGE' | 'NEW_AND_OLD_IMAGES' | 'KEYS_ONLY';
  /** Seconds since the epoch (DynamoDB's TTL). */
  readonly timeToLiveAttribute?: string;
}

/** One item per plant; the stream's old image holds a removed plant's version. */
export const plantsTableSchema = {
  partitionKey: { name: 'id', type: 'N' },
  stream: 'NEW_AND_OLD_IMAGES',
} as const satisfies TableSchema;

/** The endpoints, by owner (the token's subject) and id: no client finds another's. */
export const webhookEndpointsTableSchema = {
  partitionKey: { name: 'owner', type: 'S' },
  sortKey: { name: 'endpointId', type: 'S' },
} as const satisfies TableSchema;

/**
 * The webhook log (`webhook-log.ts`), kept 7 days, and what must be read strongly consistently,
 * which an index cannot be: who hears what, each owner's endpoint count, the call limits.
 */
export const webhookLogTableSchema = {
  partitionKey: { name: 'pk', type: 'S' },
  sortKey: { name: 'sk', type: 'S' },
  timeToLiveAttribute: 'expiresAt',
} as const satisfies TableSchema;
