/**
 * Store faults a real DynamoDB cannot be made to produce on demand: throttling, 5xx, a store that
 * never answers, a closed port, errors nobody planned for.
 */

import { execFile } from 'node:child_process';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  ConditionalCheckFailedException,
  DynamoDBServiceException,
  ProvisionedThroughputExceededException,
  ResourceNotFoundException,
} from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { createHandler } from '../../../functions/create-plant/create-handler.ts';
import { errorCodes } from '../../../functions/shared/errors/error-codes.ts';
import {
  createDocumentClient,
  type DocumentClientOptions,
  storeDeadlineMilliseconds,
} from '../../../functions/shared/platform/dynamodb.ts';
import { createLambdaContext, createPostPlantsEvent } from '../../support/api-gateway-event.ts';
import { captureLogs } from '../../support/log-capture.ts';
import { anyTraceresponse } from '../../support/trace.ts';

const run = promisify(execFile);
const clients: { destroy(): void }[] = [];

afterEach(() => {
  for (const client of clients.splice(0)) client.destroy();
});

/** A handler whose store is at `url`, with its logs captured. */
function handlerForStore(options: DocumentClientOptions & { deadlineMilliseconds?: number }) {
  const documentClient = createDocumentClient(options);
  clients.push(documentClient);
  const logs = captureLogs();
  const handle = createHandler({
    documentClient,
    tableName: 'plants',
    logger: logs.logger,
    ...(options.deadlineMilliseconds === undefined
      ? {}
      : { deadlineMilliseconds: options.deadlineMilliseconds }),
  });
  return { documentClient, logs, handle };
}

async function timedPost(handle: ReturnType<typeof createHandler>) {
  const started = performance.now();
  const response: APIGatewayProxyResult = await handle(
    createPostPlantsEvent({ body: { id: 1, name: 'Fern' } }),
    createLambdaContext(),
  );
  return { response, elapsed: performance.now() - started };
}

function expectErrorBody(
  response: APIGatewayProxyResult,
  code: { error: number; statusCode: number; message: string },
) {
  expect(response.statusCode).toBe(code.statusCode);
  expect(response.headers).toEqual({
    'Content-Type': 'application/json',
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'no-store',
    // A 503 is safe to retry, and says when.
    ...(code.statusCode === 503 ? { 'Retry-After': '1' } : {}),
    // Every answer names its trace (W3C Trace Context Level 2).
    traceresponse: anyTraceresponse,
  });
  expect(JSON.parse(response.body)).toEqual({ error: code.error, message: code.message });
}

describe('a store that never answers', () => {
  let server: Server;
  let endpoint: string;
  const sockets = new Set<Socket>();

  beforeAll(async () => {
    // Accepts connections and reads nothing back: a hung store or a black-holed load balancer.
    server = createTcpServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it(`answers 503/50300 within the ${storeDeadlineMilliseconds} ms deadline with the default configuration`, async () => {
    const { handle, logs } = handlerForStore({ url: endpoint });
    const { response, elapsed } = await timedPost(handle);
    expectErrorBody(response, errorCodes.storeUnavailable);
    expect(elapsed).toBeGreaterThanOrEqual(storeDeadlineMilliseconds * 0.66);
    expect(elapsed).toBeLessThan(storeDeadlineMilliseconds + 500);
    const [entry] = logs.entries();
    expect(entry).toMatchObject({ level: 'error', statusCode: 503, errorCode: 50300 });
    expect(logs.lines).toHaveLength(1);
  });

  it('gives up on each attempt after the request timeout and retries', async () => {
    const { handle } = handlerForStore({
      url: endpoint,
      requestTimeoutMilliseconds: 150,
      maxAttempts: 2,
      deadlineMilliseconds: 5_000,
    });
    const { response, elapsed } = await timedPost(handle);
    expectErrorBody(response, errorCodes.storeUnavailable);
    expect(elapsed).toBeGreaterThanOrEqual(300);
    expect(elapsed).toBeLessThan(1_500);
  });
});

describe('a store that is unreachable', () => {
  it('answers 503/50300 quickly when the port is closed (in a plain Node.js process)', async () => {
    const port = await closedPort();
    const script = fileURLToPath(new URL('../../support/invoke-create-plant.ts', import.meta.url));
    const { stdout } = await run(process.execPath, [script, `http://127.0.0.1:${port}`]);
    const { response, elapsed, logs } = JSON.parse(stdout);
    expectErrorBody(response, errorCodes.storeUnavailable);
    expect(elapsed).toBeLessThan(storeDeadlineMilliseconds);
    expect(logs).toEqual([
      expect.objectContaining({ level: 'error', statusCode: 503, errorCode: 50300 }),
    ]);
    expect(logs[0].error.cause).toMatchObject({ code: 'ECONNREFUSED' });
  });
});

describe('a store that throttles', () => {
  let server: HttpServer;
  let requests = 0;

  beforeAll(async () => {
    // DynamoDB's own throttling answer, for every request.
    server = createHttpServer((request, response) => {
      requests += 1;
      request.resume();
      response.writeHead(400, { 'Content-Type': 'application/x-amz-json-1.0' });
      response.end(
        JSON.stringify({
          __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
          message: 'The level of configured provisioned throughput for the table was exceeded.',
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('answers 503/50300 after the SDK has retried with backoff', async () => {
    const port = (server.address() as { port: number }).port;
    const { handle } = handlerForStore({ url: `http://127.0.0.1:${port}` });
    requests = 0;
    const { response, elapsed } = await timedPost(handle);
    expectErrorBody(response, errorCodes.storeUnavailable);
    expect(requests).toBe(3);
    expect(elapsed).toBeLessThan(storeDeadlineMilliseconds + 500);
  });
});

describe('store errors from a mocked client', () => {
  const metadata = { $metadata: { httpStatusCode: 400 }, message: 'detail for operators only' };

  it.each([
    ['throttling', () => new ProvisionedThroughputExceededException(metadata)],
    [
      'an internal server error',
      () =>
        new DynamoDBServiceException({
          name: 'InternalServerError',
          $fault: 'server',
          $metadata: { httpStatusCode: 500 },
          message: 'detail for operators only',
        }),
    ],
    ['an aborted call', () => Object.assign(new Error('aborted'), { name: 'AbortError' })],
  ])('answers 503/50300 on %s', async (_name, createError) => {
    const { documentClient, handle } = handlerForStore({ url: 'http://127.0.0.1:9' });
    mockClient(documentClient).on(PutCommand).rejects(createError());
    const { response } = await timedPost(handle);
    expectErrorBody(response, errorCodes.storeUnavailable);
  });

  it.each([
    ['a missing table', () => new ResourceNotFoundException(metadata)],
    ['a programming error', () => new TypeError('detail for operators only')],
  ])('answers 500/50000 on %s, with the detail only in the log', async (_name, createError) => {
    const { documentClient, handle, logs } = handlerForStore({ url: 'http://127.0.0.1:9' });
    mockClient(documentClient).on(PutCommand).rejects(createError());
    const event = createPostPlantsEvent({ body: { id: 1, name: 'Fern' }, requestId: 'req-500' });
    const response = await handle(event, createLambdaContext());
    expectErrorBody(response, errorCodes.internal);
    expect(response.body).not.toContain('detail');
    const [entry] = logs.entries();
    expect(entry).toMatchObject({ level: 'error', requestId: 'req-500', errorCode: 50000 });
    expect(JSON.stringify(entry)).toContain('detail for operators only');
  });

  it('answers 500/50000 when a failed condition comes without the old item, rather than guessing a conflict', async () => {
    const { documentClient, handle } = handlerForStore({ url: 'http://127.0.0.1:9' });
    mockClient(documentClient)
      .on(PutCommand)
      .rejects(new ConditionalCheckFailedException(metadata));
    const { response } = await timedPost(handle);
    expectErrorBody(response, errorCodes.internal);
  });
});

/** A port nobody listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
