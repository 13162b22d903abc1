/**
 * Tables outside CloudFormation (DynamoDB Local, tests), made from the schema the stack's tables
 * are made from (`infra/table-schemas.ts`), on-demand.
 */
import {
  type AttributeDefinition,
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  type KeySchemaElement,
  ResourceInUseException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  plantsTableSchema,
  type TableSchema,
  webhookEndpointsTableSchema,
  webhookLogTableSchema,
} from '../infra/table-schemas.ts';

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
  const attributes = new Map(
    [schema]
      .flatMap((keys) => [keys.partitionKey, ...(keys.sortKey === undefined ? [] : [keys.sortKey])])
      .map(({ name, type }) => [name, type]),
  );
  const attributeDefinitions: AttributeDefinition[] = [...attributes].map(([name, type]) => ({
    AttributeName: name,
    AttributeType: type,
  }));
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        AttributeDefinitions: attributeDefinitions,
        KeySchema: keySchemaOf(schema),
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
  if (schema.timeToLiveAttribute !== undefined) {
    const { TimeToLiveDescription } = await client.send(
      new DescribeTimeToLiveCommand({ TableName: tableName }),
    );
    if (TimeToLiveDescription?.TimeToLiveStatus !== 'ENABLED') {
      await client.send(
        new UpdateTimeToLiveCommand({
          TableName: tableName,
          TimeToLiveSpecification: { Enabled: true, AttributeName: schema.timeToLiveAttribute },
        }),
      );
    }
  }
}

function keySchemaOf(keys: Pick<TableSchema, 'partitionKey' | 'sortKey'>): KeySchemaElement[] {
  return [
    { AttributeName: keys.partitionKey.name, KeyType: 'HASH' },
    ...(keys.sortKey === undefined
      ? []
      : [{ AttributeName: keys.sortKey.name, KeyType: 'RANGE' as const }]),
  ];
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

/** The webhook endpoint tables: the endpoints, and the log of their events and attempts. */
export async function createWebhookEndpointTablesIfMissing(
  client: DynamoDBClient | DynamoDBDocumentClient,
  tableNames: { readonly endpoints: string; readonly log: string },
): Promise<void> {
  await Promise.all([
    createTableIfMissing(client, tableNames.endpoints, webhookEndpointsTableSchema),
    createTableIfMissing(client, tableNames.log, webhookLogTableSchema),
  ]);
}
