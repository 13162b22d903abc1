/**
 * The sample events in `events/` (the ones docs/running-locally.md hands to `sam local invoke`) run through
 * the real Lambda entries: the plants' against DynamoDB Local, the webhook endpoints' against it
 * and moto's KMS and SQS, the TOKEN event with a real token of the local issuer served by a
 * local JWKS endpoint.
 *
 * @services dynamodb-local
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { CreateKeyCommand } from '@aws-sdk/client-kms';
import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type {
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayTokenAuthorizerEvent,
} from 'aws-lambda';
import { type MotoServer, startMotoServer } from '../../beds/moto-server.ts';
import {
  functionDisplayName,
  routeFunctionNames,
  routesOf,
} from '../../functions/shared/http/routes.ts';
import {
  type JwksServer,
  localAuthorizerEnvironment,
  startJwksServer,
} from '../../local/jwks-server.ts';
import { createWebhookEndpointTablesIfMissing } from '../../local/tables.ts';
import { loadOrCreateLocalKeys, localJwks, signLocalToken } from '../../local/token-issuer.ts';
import { createLambdaContext } from '../support/api-gateway-event.ts';
import { createTestTable, type TestTable } from '../support/test-store.ts';

const repositoryRoot = path.resolve(import.meta.dirname, '../..');

function readEvent<T>(name: string): T {
  return JSON.parse(readFileSync(path.join(repositoryRoot, 'events', name), 'utf8')) as T;
}

/** Sets environment variables for the duration of a test file, then restores them. */
function setEnvironment(variables: Record<string, string>): () => void {
  const previous = Object.fromEntries(
    Object.keys(variables).map((name) => [name, process.env[name]]),
  );
  Object.assign(process.env, variables);
  return () => {
    for (const [name, value] of Object.entries(previous)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}

type ProxyHandler = (
  event: APIGatewayProxyEvent,
  context: unknown,
) => Promise<APIGatewayProxyResult>;

// The Lambda entries log to stdout, as in Lambda; not into the test run's output (their lines
// are checked in test/infra/metric-filters.integration.test.ts).
beforeAll(() => {
  jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
});
afterAll(() => {
  jest.restoreAllMocks();
});

describe('the route events (one per route function)', () => {
  let table: TestTable;
  let moto: MotoServer;
  let restoreEnvironment: () => void;
  const handlers: Record<string, ProxyHandler> = {};
  const endpointTables = {
    endpoints: `webhook-endpoints-events-${process.pid}`,
    log: `webhook-log-events-${process.pid}`,
  };

  beforeAll(async () => {
    [table, moto] = await Promise.all([createTestTable(), startMotoServer()]);
    await createWebhookEndpointTablesIfMissing(table.documentClient, endpointTables);
    const { KeyMetadata } = await moto.kms.send(new CreateKeyCommand({}));
    const { QueueUrl } = await moto.sqs.send(
      new CreateQueueCommand({ QueueName: `deliveries-${process.pid}` }),
    );
    // As `sam local invoke --env-vars` sets them (npm run sam:services), pointed at the test
    // store and moto.
    restoreEnvironment = setEnvironment({
      TABLE_NAME: table.tableName,
      DYNAMODB_ENDPOINT: table.url,
      ENDPOINTS_TABLE_NAME: endpointTables.endpoints,
      WEBHOOK_LOG_TABLE_NAME: endpointTables.log,
      SECRETS_KEY_ID: KeyMetadata?.KeyId ?? '',
      KMS_ENDPOINT: moto.url,
      DELIVERY_QUEUE_URLS: QueueUrl ?? '',
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
      AWS_REGION: moto.region,
    });
    // The Lambda entries read their environment while loading: import them after setting it.
    for (const name of routeFunctionNames.map(functionDisplayName)) {
      const entry = (await import(`../../functions/${name}/handler.ts`)) as {
        handler: ProxyHandler;
      };
      handlers[name] = entry.handler;
    }
  });

  afterAll(async () => {
    restoreEnvironment?.();
    for (const name of Object.values(endpointTables)) {
      await table?.documentClient.send(new DeleteTableCommand({ TableName: name }));
    }
    await table?.remove();
    await moto?.stop();
  });

  /** Runs a sample event, changed by `change`, through its function's Lambda entry. */
  function invoke(
    name: string,
    change: (event: APIGatewayProxyEvent) => APIGatewayProxyEvent = (event) => event,
  ): Promise<APIGatewayProxyResult> {
    const handler = handlers[name];
    if (handler === undefined) throw new Error(`no handler ${name}`);
    return handler(change(readEvent<APIGatewayProxyEvent>(`${name}.json`)), createLambdaContext());
  }

  it.each(
    routeFunctionNames.map((name) => [
      functionDisplayName(name),
      routesOf(name).map((route) => `${route.method} ${route.path}`),
    ]),
  )('%s.json is a REST API proxy event for one of %j on the dev stage', (name, served) => {
    const event = readEvent<APIGatewayProxyEvent>(`${name}.json`);
    const method = event.httpMethod;
    const resource = event.resource;
    expect(served).toContain(`${method} ${resource}`);
    expect(readEvent<APIGatewayProxyEvent>(`${name}.json`)).toMatchObject({
      httpMethod: method,
      resource,
      requestContext: { stage: 'dev', httpMethod: method, resourcePath: resource },
    });
  });

  /** An answer but for its trace: each request, a repeat too, is a span of its own. */
  const untraced = ({ headers, ...answer }: APIGatewayProxyResult) => ({
    ...answer,
    headers: { ...headers, traceresponse: undefined },
  });

  it('creates, lists, reads and deletes the sample plant, its int64 id kept exactly', async () => {
    const first = await invoke('create-plant');
    const retry = await invoke('create-plant');
    expect(first.statusCode).toBe(200);
    expect(JSON.parse(first.body)).toEqual({ name: 'Monstera deliciosa', tag: 'tropical' });
    expect(untraced(retry)).toEqual(untraced(first));
    const stored = await table.getItem(9_007_199_254_740_993n);
    // 2^53 + 1: a JSON.parse round trip would have stored ...992.
    expect(String(stored?.id)).toBe('9007199254740993');

    const storedPlant = '{"id":9007199254740993,"name":"Monstera deliciosa","tag":"tropical"}';
    expect(await invoke('list-plants')).toMatchObject({
      statusCode: 200,
      body: `[${storedPlant}]`,
    });
    const read = await invoke('get-plant');
    expect(read).toMatchObject({ statusCode: 200, body: storedPlant });
    // update-plant.json: a merge patch of the tag, If-Match `*`.
    const changed = await invoke('update-plant');
    expect(changed).toMatchObject({
      statusCode: 200,
      body: '{"id":9007199254740993,"name":"Monstera deliciosa","tag":"shade"}',
    });
    expect(changed.headers?.ETag).not.toBe(read.headers?.ETag);
    expect(untraced(await invoke('update-plant'))).toEqual(untraced(changed));
    expect(await invoke('delete-plant')).toMatchObject({ statusCode: 204, body: '' });
    expect(await invoke('get-plant')).toMatchObject({ statusCode: 404 });
    expect(await table.scanItems()).toHaveLength(0);
  });

  it('registers, reads, changes, rotates, tests, recovers and deletes the sample endpoint', async () => {
    const created = await invoke('create-webhook-endpoint');
    expect(created.statusCode).toBe(201);
    const { id, secret } = JSON.parse(created.body);
    expect(secret).toMatch(/^whsec_/);
    // The other events name the sample's id (replace it with yours under `sam local`).
    const ofCreated = (event: APIGatewayProxyEvent) => ({
      ...event,
      path: event.path.replace(/ep_\w+/, id),
      pathParameters: { endpointId: id },
    });
    expect(JSON.parse((await invoke('list-webhook-endpoints')).body)).toEqual([
      expect.objectContaining({ id, url: 'https://93.184.215.14/plant-store' }),
    ]);
    expect(await invoke('get-webhook-endpoint', ofCreated)).toMatchObject({ statusCode: 200 });
    expect((await invoke('get-webhook-endpoint')).statusCode).toBe(404);
    const changed = await invoke('update-webhook-endpoint', ofCreated);
    expect(JSON.parse(changed.body)).toMatchObject({ events: ['plant.created'] });
    expect(JSON.parse((await invoke('get-webhook-endpoint-secret', ofCreated)).body)).toEqual({
      secret,
    });
    const rotated = JSON.parse((await invoke('rotate-webhook-endpoint-secret', ofCreated)).body);
    expect(rotated.secret).not.toBe(secret);
    expect(await invoke('test-webhook-endpoint', ofCreated)).toMatchObject({ statusCode: 202 });
    expect(await invoke('list-webhook-endpoint-attempts', ofCreated)).toMatchObject({
      statusCode: 200,
      body: '[]',
    });
    // The sample's `since` is a fixed day; a recover asks for one of the last 7.
    const recovered = await invoke('recover-webhook-endpoint', (event) => ({
      ...ofCreated(event),
      body: JSON.stringify({ since: new Date(Date.now() - 60_000).toISOString() }),
    }));
    expect(recovered).toMatchObject({ statusCode: 202, body: '{"events":0,"more":false}' });
    expect(await invoke('delete-webhook-endpoint', ofCreated)).toMatchObject({ statusCode: 204 });
    expect((await invoke('get-webhook-endpoint', ofCreated)).statusCode).toBe(404);
  });
});

describe('events/authorizer-token.json', () => {
  let keysDirectory: string;
  let jwksServer: JwksServer;
  let restoreEnvironment: () => void;
  let handler: (event: APIGatewayTokenAuthorizerEvent) => Promise<unknown>;
  let token: string;

  beforeAll(async () => {
    keysDirectory = mkdtempSync(path.join(tmpdir(), 'plant-store-keys-'));
    const keys = loadOrCreateLocalKeys(keysDirectory);
    token = signLocalToken(keys);
    jwksServer = await startJwksServer(localJwks(keys));
    restoreEnvironment = setEnvironment(localAuthorizerEnvironment(jwksServer.jwksUri));
    ({ handler } = (await import('../../functions/authorizer/handler.ts')) as unknown as {
      handler: typeof handler;
    });
  });

  afterAll(async () => {
    restoreEnvironment?.();
    await jwksServer?.close();
    if (keysDirectory !== undefined) rmSync(keysDirectory, { recursive: true, force: true });
  });

  it('allows every route of the dev stage once a valid token with both scopes replaces the placeholder', async () => {
    const event = readEvent<APIGatewayTokenAuthorizerEvent>('authorizer-token.json');
    const result = await handler({ ...event, authorizationToken: `Bearer ${token}` });
    expect(result).toMatchObject({
      principalId: 'local-developer',
      policyDocument: {
        Statement: [
          {
            Action: 'execute-api:Invoke',
            Effect: 'Allow',
            Resource: [
              'POST/plants',
              'GET/plants',
              'GET/plants/*',
              'PUT/plants/*',
              'PATCH/plants/*',
              'DELETE/plants/*',
            ].map((route) => `arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5/dev/${route}`),
          },
        ],
      },
      context: { sub: 'local-developer', scope: 'plants/read plants/write' },
    });
  });

  it('answers Unauthorized (401) for the placeholder as committed', async () => {
    const event = readEvent<APIGatewayTokenAuthorizerEvent>('authorizer-token.json');
    expect(event.type).toBe('TOKEN');
    await expect(handler(event)).rejects.toThrow('Unauthorized');
  });
});
