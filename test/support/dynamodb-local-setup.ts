/**
 * Jest globalSetup: one in-memory DynamoDB Local for the whole run (the JVM's start-up is paid
 * once); test files reach it through {@link testStoreEndpointVariable} and make their own tables.
 */
import { startDynamoDbLocal } from '../../local/dynamodb-local.ts';
import { testStoreEndpointVariable } from './test-store.ts';

export default async function startTestStore(): Promise<void> {
  const store = await startDynamoDbLocal();
  process.env[testStoreEndpointVariable] = store.endpoint;
  // globalSetup and globalTeardown share this realm; the teardown stops what was started here.
  (globalThis as { plantStoreTestStore?: typeof store }).plantStoreTestStore = store;
}
