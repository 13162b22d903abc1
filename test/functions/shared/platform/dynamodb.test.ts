/**
 * The document client reads the store's answers with its own response-body reader (see
 * `createDocumentClient`): answers arriving in many pieces, split inside a character, empty, or
 * cut off, are read exactly as the SDK's reader would.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { createDocumentClient } from '../../../../functions/shared/platform/dynamodb.ts';

/** How the stand-in answers the next request. */
let answer: (response: ServerResponse) => void = () => {};
let server: Server;
const clients: { destroy(): void }[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    request.resume().on('end', () => answer(response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});

afterEach(() => {
  for (const client of clients.splice(0)) client.destroy();
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

function createClient() {
  const { port } = server.address() as AddressInfo;
  const client = createDocumentClient({ url: `http://127.0.0.1:${port}`, maxAttempts: 1 });
  clients.push(client);
  return client;
}

/** Writes `body` in pieces of `size` bytes, each in its own event-loop turn, then ends. */
function answerInPieces(statusCode: number, body: string, size: number) {
  answer = (response) => {
    const bytes = Buffer.from(body, 'utf8');
    response.writeHead(statusCode, { 'Content-Type': 'application/x-amz-json-1.0' });
    let offset = 0;
    const writeNext = () => {
      if (offset >= bytes.length) {
        response.end();
        return;
      }
      response.write(bytes.subarray(offset, offset + size));
      offset += size;
      setImmediate(writeNext);
    };
    writeNext();
  };
}

const putOldFern = new PutCommand({
  TableName: 'plants',
  Item: { id: 7, name: 'Fern' },
  ReturnValues: 'ALL_OLD',
});

describe('the response-body reader of the document client', () => {
  it('joins an answer sent in pieces, split inside a multi-byte character', async () => {
    // 'é' and '🌿' take 2 and 4 bytes in UTF-8; pieces of 3 bytes cut through both.
    answerInPieces(
      200,
      JSON.stringify({ Attributes: { id: { N: '7' }, name: { S: 'Fougère 🌿' } } }),
      3,
    );
    const output = await createClient().send(putOldFern);
    expect(output.Attributes?.name).toBe('Fougère 🌿');
    expect(String(output.Attributes?.id)).toBe('7');
  });

  it('reads an error answer sent in pieces, with its old item', async () => {
    answerInPieces(
      400,
      JSON.stringify({
        __type: 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException',
        message: 'The conditional request failed',
        Item: { id: { N: '7' }, name: { S: 'Fern' } },
      }),
      16,
    );
    const sent = createClient().send(putOldFern);
    await expect(sent).rejects.toBeInstanceOf(ConditionalCheckFailedException);
    await expect(sent).rejects.toMatchObject({
      Item: { id: { N: '7' }, name: { S: 'Fern' } },
    });
  });

  it('reads an empty answer as no output', async () => {
    answer = (response) => {
      response.writeHead(200, { 'Content-Type': 'application/x-amz-json-1.0' });
      response.end();
    };
    const output = await createClient().send(putOldFern);
    expect(output.Attributes).toBeUndefined();
    expect(output.$metadata.httpStatusCode).toBe(200);
  });

  it('fails when the store closes the connection in the middle of an answer', async () => {
    answer = (response) => {
      response.writeHead(200, { 'Content-Type': 'application/x-amz-json-1.0' });
      response.write('{"Attributes": {"name": {"S": "Fe');
      setImmediate(() => response.destroy());
    };
    await expect(createClient().send(putOldFern)).rejects.toThrow();
  });
});
