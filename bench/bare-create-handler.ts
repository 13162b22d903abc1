/**
 * The yardstick of the warm path: a handler that only parses the body and sends the same put
 * through the same DocumentClient as the create function (`POST /plants`), with no middy, validation, int64 parsing,
 * error mapping or logging. Bundled like the functions by the benchmark; never deployed.
 *
 * With `BENCH_CLIENT_PER_INVOCATION=1` it builds (and destroys) its client in every invocation,
 * the mistake that module-scope clients avoid: no reused connection, no cached configuration.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { createDocumentClient } from '../functions/shared/platform/dynamodb.ts';

const tableName = process.env.TABLE_NAME ?? 'plants';
const endpoint = process.env.DYNAMODB_ENDPOINT;
const clientPerInvocation = process.env.BENCH_CLIENT_PER_INVOCATION === '1';
const createClient = () => createDocumentClient(endpoint === undefined ? {} : { url: endpoint });
const moduleClient = clientPerInvocation ? undefined : createClient();

/** Parses the body and puts it, conditioned like the create function; no checks at all. */
export async function handler(event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
  const { id, name, tag } = JSON.parse(event.body ?? '{}');
  const documentClient = moduleClient ?? createClient();
  try {
    await documentClient.send(
      new PutCommand({
        TableName: tableName,
        Item: { id, name, tag },
        ConditionExpression: 'attribute_not_exists(id)',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
  } finally {
    if (documentClient !== moduleClient) documentClient.destroy();
  }
  return { statusCode: 200, body: JSON.stringify({ name, tag }) };
}
