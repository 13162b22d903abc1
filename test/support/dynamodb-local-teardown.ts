/** Jest globalTeardown: stops the DynamoDB Local of `dynamodb-local-setup.ts`. */
import type { DynamoDbLocal } from '../../local/dynamodb-local.ts';

export default async function stopTestStore(): Promise<void> {
  await (globalThis as { plantStoreTestStore?: DynamoDbLocal }).plantStoreTestStore?.stop();
}
