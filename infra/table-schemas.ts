/**
 * The key schema and stream of every DynamoDB table, written once: the stack's tables and the
 * tables `npm start` and the tests make in DynamoDB Local are both built from these.
 *
 * Plain data (no aws-cdk-lib): `local/` imports it.
 */

/** A DynamoDB table's shape, in the words of the DynamoDB API. */
export interface TableSchema {
  readonly partitionKey: { readonly name: string; readonly type: 'S' | 'N' };
  readonly sortKey?: { readonly name: string; readonly type: 'S' | 'N' };
  /** The stream's view type, when the table has a stream. */
  readonly stream?: 'NEW_IMAGE' | 'OLD_IMAGE' | 'NEW_AND_OLD_IMAGES' | 'KEYS_ONLY';
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
