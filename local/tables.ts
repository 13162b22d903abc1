/**
 * Tables outside CloudFormation (DynamoDB Local, tests), made from the schema the stack's tables
 * are made from (`infra/table-schemas.ts`), on-demand.
 */
import {
  type AttributeDefinition,
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  type KeySchemaElement,
  ResourceInUseException,
  UpdateTableCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { plantsTableSchema, type TableSchema } from '../infra/table-schemas.ts';

/**
 * Creates the table unless it exists, and resolves once it is ACTIVE with the schema's stream.
 * Takes a low-level client or a document client (which passes table commands through unchanged).
 */
export async function createTableIfMissing(
  anyClient: DynamoDBClient | DynamoDBDocumentClient,
  tableName: string,
  schema: TableSchema,
): Promise<void> {
  const client = anyClient as DynamoDBClient;
  const keys = [
    { ...schema.partitionKey, role: 'HASH' as const },
    ...(schema.sortKey === undefined ? [] : [{ ...schema.sortKey, role: 'RANGE' as const }]),
  ];
  const attributeDefinitions: AttributeDefinition[] = keys.map(({ name, type }) => ({
    AttributeName: name,
    AttributeType: type,
  }));
  const keySchema: KeySchemaElement[] = keys.map(({ name, role }) => ({
    AttributeName: name,
    KeyType: role,
  }));
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        AttributeDefinitions: attributeDefinitions,
        KeySchema: keySchema,
        BillingMode: 'PAY_PER_REQUEST',
        ...(schema.stream === undefined
          ? {}
          : { StreamSpecification: { StreamEnabled: true, StreamViewType: schema.stream } }),
      }),
    );
  } catch (error) {
    // Already there (a restart, or a concurrent creator): fine, as long as it becomes ACTIVE.
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  await waitUntilTableExists(
    { client, minDelay: 1, maxDelay: 2, maxWaitTime: 60 },
    { TableName: tableName },
  );
  if (schema.stream !== undefined) await ensureStream(client, tableName, schema.stream);
}

/**
 * A table an earlier version created has no stream yet, or one of another view type. A stream's
 * view type cannot be changed in place: it is turned off, then on (a new stream).
 */
async function ensureStream(
  client: DynamoDBClient,
  tableName: string,
  viewType: NonNullable<TableSchema['stream']>,
): Promise<void> {
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  const stream = Table?.StreamSpecification;
  if (stream?.StreamViewType === viewType) return;
  if (stream?.StreamEnabled === true) {
    await client.send(
      new UpdateTableCommand({
        TableName: tableName,
        StreamSpecification: { StreamEnabled: false },
      }),
    );
  }
  await client.send(
    new UpdateTableCommand({
      TableName: tableName,
      StreamSpecification: { StreamEnabled: true, StreamViewType: viewType },
    }),
  );
}

/** The plants table (`npm start`, the tests, the webhook test bed). */
export function createPlantsTableIfMissing(
  client: DynamoDBClient | DynamoDBDocumentClient,
  tableName: string,
): Promise<void> {
  return createTableIfMissing(client, tableName, plantsTableSchema);
}
