/**
 * The plants table outside CloudFormation (DynamoDB Local, tests): the same key schema as the
 * deployed table, partition key `id` of type Number, on-demand.
 */
import {
  CreateTableCommand,
  type DynamoDBClient,
  ResourceInUseException,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';

/** Creates the table unless it exists, and resolves once it is ACTIVE. */
export async function createPlantsTableIfMissing(
  client: DynamoDBClient,
  tableName: string,
): Promise<void> {
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'N' }],
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
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
}
