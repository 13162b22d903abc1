/**
 * The plants table outside CloudFormation (DynamoDB Local, tests): the same key schema as the
 * deployed table, partition key `id` of type Number, on-demand, with a stream of new and old images
 * (the source of the webhooks: a deleted plant is only in its old image).
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceInUseException,
  UpdateTableCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * Creates the table unless it exists, and resolves once it is ACTIVE. Takes a low-level client or
 * a document client (which passes table commands through unchanged).
 */
export async function createPlantsTableIfMissing(
  anyClient: DynamoDBClient | DynamoDBDocumentClient,
  tableName: string,
): Promise<void> {
  const client = anyClient as DynamoDBClient;
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'N' }],
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
        StreamSpecification: streamSpecification,
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
  // A table an earlier version created has no stream yet, or one of new images only. A stream's
  // view type cannot be changed in place: it is turned off, then on (a new stream).
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  const stream = Table?.StreamSpecification;
  if (stream?.StreamViewType === streamSpecification.StreamViewType) return;
  if (stream?.StreamEnabled === true) {
    await client.send(
      new UpdateTableCommand({
        TableName: tableName,
        StreamSpecification: { StreamEnabled: false },
      }),
    );
  }
  await client.send(
    new UpdateTableCommand({ TableName: tableName, StreamSpecification: streamSpecification }),
  );
}

const streamSpecification = {
  StreamEnabled: true,
  StreamViewType: 'NEW_AND_OLD_IMAGES',
} as const;
