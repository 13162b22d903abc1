/**
 * The yardstick of the warm path: a handler that only parses the body and sends the same put
 * through the same DocumentClient as create-plant, with no middy, validation, int64 parsing,
 * error mapping or logging. Bundled like the functions by the benchmark; never deployed.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { createDocumentClient } from '../functions/shared/dynamodb.ts';

const tableName = process.env.TABLE_NAME ?? 'plants';
const endpoint = process.env.DYNAMODB_ENDPOINT;
const documentClient = createDocumentClient(endpoint === undefined ? {} : { endpoint });

/** Parses the body and puts it, conditioned like create-plant; no checks at all. */
export async function handler(event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
  const { id, name, tag } = JSON.parse(event.body ?? '{}');
  await documentClient.send(
    new PutCommand({
      TableName: tableName,
      Item: { id, name, tag },
      ConditionExpression: 'attribute_not_exists(id)',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    }),
  );
  return { statusCode: 200, body: JSON.stringify({ name, tag }) };
}
