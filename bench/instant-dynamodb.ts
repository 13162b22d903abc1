/**
 * An instant DynamoDB stand-in: a `node:http` server on 127.0.0.1 that answers at once the way
 * DynamoDB answers a successful call: a GetItem with a plant, an UpdateItem with the plant it
 * wrote, a Scan with as many plants as its Limit asks for, anything else (PutItem, DeleteItem)
 * with `{}`. Timings against it measure the
 * Plant Store's code and the SDK, not a store.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface InstantDynamoDb {
  /** `http://127.0.0.1:<port>`, for `DYNAMODB_ENDPOINT` or the client's `url`. */
  readonly url: string;
  /** Requests answered so far (a benchmark checks its creates did reach the store). */
  readonly requestCount: number;
  close(): Promise<void>;
}

/** Starts the stand-in on a free port. */
export async function startInstantDynamoDb(): Promise<InstantDynamoDb> {
  let requestCount = 0;
  const server = createServer((request, response) => {
    // Drain the body first: answering earlier would let the SDK see a response to a request it
    // is still writing.
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      requestCount += 1;
      response.writeHead(200, {
        'content-type': 'application/x-amz-json-1.0',
        'x-amzn-requestid': `instant-${requestCount}`,
      });
      response.end(answer(String(request.headers['x-amz-target']), Buffer.concat(chunks)));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get requestCount() {
      return requestCount;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A stored plant as DynamoDB writes it on the wire, with an id past 2^53. */
function plantItem(index: number): string {
  return `{"id":{"N":"${9_007_199_254_740_993n + BigInt(index)}"},"name":{"S":"Monstera deliciosa"},"tag":{"S":"tropical"}}`;
}

function answer(target: string, body: Buffer): string {
  if (target.endsWith('.GetItem')) return `{"Item":${plantItem(0)}}`;
  // A change as DynamoDB answers it with ReturnValues ALL_NEW: the item written, its version.
  if (target.endsWith('.UpdateItem')) {
    return `{"Attributes":${plantItem(0).slice(0, -1)},"version":{"N":"1795000000000"}}}`;
  }
  if (target.endsWith('.Scan')) {
    const { Limit = 20 } = JSON.parse(body.toString()) as { Limit?: number };
    const items = Array.from({ length: Limit }, (_, index) => plantItem(index));
    return `{"Count":${Limit},"Items":[${items.join(',')}],"LastEvaluatedKey":{"id":{"N":"1"}}}`;
  }
  return '{}';
}
