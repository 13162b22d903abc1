/**
 * An instant DynamoDB stand-in: a `node:http` server on 127.0.0.1 that answers every request
 * the way DynamoDB answers a successful PutItem without return values, `{}`, at once. Timings
 * against it measure the Plant Store's code and the SDK, not a store.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface InstantDynamoDb {
  /** `http://127.0.0.1:<port>`, for `DYNAMODB_ENDPOINT` or the client's `endpoint`. */
  readonly endpoint: string;
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
    request.resume();
    request.on('end', () => {
      requestCount += 1;
      response.writeHead(200, {
        'content-type': 'application/x-amz-json-1.0',
        'x-amzn-requestid': `instant-${requestCount}`,
      });
      response.end('{}');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
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
