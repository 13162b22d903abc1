import { startDynamoDbLocal } from './local/dynamodb-local.ts';
import { createDocumentClient } from './functions/shared/dynamodb.ts';
import { createPlantsTableIfMissing } from './local/tables.ts';
const store = await startDynamoDbLocal({ port: 8123 });
const client = createDocumentClient({ endpoint: store.endpoint });
await createPlantsTableIfMissing(client, 'plants');
console.log('ready', store.endpoint);
setInterval(() => {}, 1 << 30);
