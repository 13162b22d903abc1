/**
 * A fresh plants table in the worker's DynamoDB Local, per test file (unique names keep files
 * independent when Jest runs them in parallel). A test file that uses it names the service in
 * its docblock (`@services dynamodb-local`, see `services-environment.ts`).
 */
import { randomUUID } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../functions/shared/platform/dynamodb.ts';
import { createPlantsTableIfMissing } from '../../local/tables.ts';

/** Set by `services-environment.ts` to the URL of the worker's DynamoDB Local. */
export const testStoreUrlVariable = 'PLANT_STORE_TEST_DYNAMODB_ENDPOINT';

export interface TestTable {
  readonly url: string;
  readonly tableName: string;
  /** A client configured exactly as the Lambda's (bounded timeouts, exact numbers). */
  readonly documentClient: DynamoDBDocumentClient;
  /** The stored item of `id` (numbers wrapped, exact), or undefined. */
  getItem(id: bigint | string): Promise<Record<string, unknown> | undefined>;
  /** Every stored item. */
  scanItems(): Promise<Record<string, unknown>[]>;
  /** Deletes the table and closes the clients. */
  remove(): Promise<void>;
}

/** The endpoint of the worker's DynamoDB Local. */
export function testStoreUrl(): string {
  const endpoint = process.env[testStoreUrlVariable];
  if (endpoint === undefined) {
    throw new Error(
      'This test uses DynamoDB Local: name its file *.integration.test.ts (or another tier that ' +
        'has services) and put `@services dynamodb-local` in its first docblock.',
    );
  }
  return endpoint;
}

/** Creates a uniquely named plants table in the worker's DynamoDB Local. */
export async function createTestTable(): Promise<TestTable> {
  const endpoint = testStoreUrl();
  const tableName = `plants-test-${randomUUID()}`;
  const documentClient = createDocumentClient({ url: endpoint });
  await createPlantsTableIfMissing(documentClient, tableName);
  return {
    url: endpoint,
    tableName,
    documentClient,
    getItem: async (id) => {
      const key = { id: typeof id === 'bigint' ? id : BigInt(id) };
      const result = await documentClient.send(new GetCommand({ TableName: tableName, Key: key }));
      return result.Item;
    },
    scanItems: async () => {
      const result = await documentClient.send(new ScanCommand({ TableName: tableName }));
      return result.Items ?? [];
    },
    remove: async () => {
      await documentClient.send(new DeleteTableCommand({ TableName: tableName }));
      documentClient.destroy();
    },
  };
}
