/**
 * Invokes the create-plant handler once in a plain Node.js process and prints
 * `{ response, elapsed }` as JSON. Usage: `node invoke-create-plant.ts <store endpoint>`.
 *
 * For faults whose errors come from Node's own sockets: inside Jest's VM they belong to another
 * realm, and the SDK then wraps them into plain errors that lose their `code`, which a Lambda
 * never sees.
 */
import { createHandler } from '../../functions/create-plant/create-handler.ts';
import { createDocumentClient } from '../../functions/shared/platform/dynamodb.ts';
import { createLogger } from '../../functions/shared/platform/logger.ts';
import { createLambdaContext, createPostPlantsEvent } from './api-gateway-event.ts';

const [endpoint] = process.argv.slice(2);
if (endpoint === undefined) throw new Error('usage: invoke-create-plant.ts <store endpoint>');
const documentClient = createDocumentClient({ url: endpoint });
const logs: unknown[] = [];
const handle = createHandler({
  documentClient,
  tableName: 'plants',
  logger: createLogger({}, (line) => logs.push(JSON.parse(line))),
});
const started = performance.now();
const response = await handle(
  createPostPlantsEvent({ body: { id: 1, name: 'Fern' } }),
  createLambdaContext(),
);
const elapsed = performance.now() - started;
documentClient.destroy();
process.stdout.write(JSON.stringify({ response, elapsed, logs }));
