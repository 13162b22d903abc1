/**
 * What the table really holds, read straight from DynamoDB (not through the API), compared with
 * what the clients were told: every acknowledged plant stored once and intact, nothing else.
 */
import type { NumberValue } from '@aws-sdk/lib-dynamodb';
import { type DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';

/** A plant as a client was told it is stored: the id's exact decimal text, name and tag. */
export interface ExpectedPlant {
  readonly name: string;
  readonly tag?: string;
}

/** An item of the table: its exact id text and every attribute as stored. */
export interface StoredItem {
  readonly id: string;
  readonly attributes: Record<string, unknown>;
}

const maxScanPages = 1_000;

/** Every item of the table (a consistent, paginated Scan; ids exact as text). */
export async function scanStoredItems(
  documentClient: DynamoDBDocumentClient,
  tableName: string,
): Promise<StoredItem[]> {
  const items: StoredItem[] = [];
  let startKey: Record<string, unknown> | undefined;
  for (let page = 0; page < maxScanPages; page += 1) {
    const result = await documentClient.send(
      new ScanCommand({ TableName: tableName, ConsistentRead: true, ExclusiveStartKey: startKey }),
    );
    for (const attributes of result.Items ?? []) {
      // The document client wraps numbers (`wrapNumbers`), so the id is exact text.
      items.push({ id: (attributes.id as NumberValue).value, attributes });
    }
    startKey = result.LastEvaluatedKey;
    if (startKey === undefined) return items;
  }
  throw new Error(`${tableName} has more than ${maxScanPages} pages`);
}

/** The differences between the table and what the clients were told; all empty when they agree. */
export interface StoreAudit {
  /** Acknowledged with 200 but not stored. */
  readonly missing: string[];
  /** Stored with other content than acknowledged, or with undeclared attributes. */
  readonly altered: string[];
  /** Stored although no client was told so. */
  readonly unacknowledged: string[];
  /** Stored more than once (a table keyed by id cannot, but the Scan says so if it did). */
  readonly duplicated: string[];
}

export function auditStore(
  items: readonly StoredItem[],
  acknowledged: ReadonlyMap<string, ExpectedPlant>,
): StoreAudit {
  const audit: StoreAudit = { missing: [], altered: [], unacknowledged: [], duplicated: [] };
  const seen = new Set<string>();
  for (const { id, attributes } of items) {
    if (seen.has(id)) audit.duplicated.push(id);
    seen.add(id);
    const expected = acknowledged.get(id);
    if (expected === undefined) {
      audit.unacknowledged.push(id);
      continue;
    }
    // Every plant the API stores has a version (the number in its ETag) and the writing request's
    // trace (docs/tracing.md), and nothing else.
    const { id: _id, version, traceparent, ...stored } = attributes;
    const wanted = expected.tag === undefined ? { name: expected.name } : { ...expected };
    if (
      !/^[1-9][0-9]*$/.test((version as NumberValue | undefined)?.value ?? '') ||
      !/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/.test(String(traceparent)) ||
      JSON.stringify(stored, Object.keys(stored).sort()) !==
        JSON.stringify(wanted, Object.keys(wanted).sort())
    ) {
      audit.altered.push(id);
    }
  }
  for (const id of acknowledged.keys()) if (!seen.has(id)) audit.missing.push(id);
  return audit;
}

/** The audit of a table that agrees with the clients, for `toEqual`. */
export const cleanAudit: StoreAudit = {
  missing: [],
  altered: [],
  unacknowledged: [],
  duplicated: [],
};
