/**
 * Every metric filter of the stack matched against the real log line of the real function (run
 * here against DynamoDB Local, with the writer captured), its value and dimension fields present.
 *
 * @services dynamodb-local
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { S3Client } from '@aws-sdk/client-s3';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { APIGatewayProxyEvent, DynamoDBStreamEvent } from 'aws-lambda';
import { createHandler as createAuthorizer } from '../../functions/authorizer/create-handler.ts';
import { createHandler as createCreatePlant } from '../../functions/create-plant/create-handler.ts';
import { createHandler as createDeletePlant } from '../../functions/delete-plant/create-handler.ts';
import { createHandler as createDeliverHandler } from '../../functions/deliver-webhook/create-handler.ts';
import { createHandler as createGetPlant } from '../../functions/get-plant/create-handler.ts';
import { createHandler as createListPlants } from '../../functions/list-plants/create-handler.ts';
import { createHandler as createReplayHandler } from '../../functions/replay-stream-failures/create-handler.ts';
import { createDocumentClient } from '../../functions/shared/dynamodb.ts';
import { createLogger, type Logger } from '../../functions/shared/logger.ts';
import { functionDisplayName, routes } from '../../functions/shared/routes.ts';
import type { EndpointHandlerDependencies } from '../../functions/shared/webhook-endpoints/endpoint-function.ts';
import { putNewEndpoint } from '../../functions/shared/webhook-endpoints/endpoint-store.ts';
import { localUrlPolicy } from '../../functions/shared/webhook-endpoints/endpoint-url.ts';
import { localSecretBox } from '../../functions/shared/webhook-endpoints/secret-box.ts';
import { firstDeliveryMessage } from '../../functions/shared/webhooks/delivery-message.ts';
import { sqsDeliveryQueue } from '../../functions/shared/webhooks/delivery-queue.ts';
import { subscriptionOf } from '../../functions/shared/webhooks/plant-events.ts';
import { fixedSubscriptions } from '../../functions/shared/webhooks/queue-deliveries.ts';
import { createHandler as createUpdatePlant } from '../../functions/update-plant/create-handler.ts';
import { createHandler as createFanoutHandler } from '../../functions/webhook-fanout/create-handler.ts';
import { functionSettings } from '../../infra/function-settings.ts';
import { stages } from '../../infra/stages.ts';
import { isEndpointRoute } from '../../infra/throttling.ts';
import { createWebhookEndpointTablesIfMissing } from '../../local/tables.ts';
import {
  createEndpointEvent,
  createLambdaContext,
  createPlantsEvent,
  createPostPlantsEvent,
} from '../support/api-gateway-event.ts';
import { matchesFilterPattern } from '../support/metric-filter-pattern.ts';
import { deliveryEvent, deliveryRecord } from '../support/sqs-event.ts';
import { createTestTable, type TestTable } from '../support/test-store.ts';
import { synthesizeStages } from './synthesized-stages.ts';

const synthesizedStage = synthesizeStages();

type ProxyHandler = (
  event: APIGatewayProxyEvent,
  context: ReturnType<typeof createLambdaContext>,
) => Promise<unknown>;

describe('metric filters, against the real log lines', () => {
  /** Log lines by the function that wrote them (display name), each parsed once. */
  const lines = new Map<string, string[]>();
  const loggerOf = (name: string): Logger =>
    createLogger({ service: name }, (line) => {
      lines.set(name, [...(lines.get(name) ?? []), line]);
    });
  let table: TestTable;
  let subscriber: Server;
  let subscriberAnswer = 204;

  beforeAll(async () => {
    // As Lambda sets it in a published version: every line names its version.
    process.env.AWS_LAMBDA_FUNCTION_VERSION = '7';
    // As the runtime sets it when the function is traced.
    process.env._X_AMZN_TRACE_ID = 'Root=1-67891233-abcdef012345678912345678;Sampled=1';
    table = await createTestTable();
    subscriber = createServer((request, response) => {
      request.resume().on('end', () => response.writeHead(subscriberAnswer).end());
    });
    await new Promise<void>((resolve) => subscriber.listen(0, '127.0.0.1', resolve));
    const subscriberUrl = `http://127.0.0.1:${(subscriber.address() as AddressInfo).port}/`;

    // create-plant: a create, a conflict, and a store that is not there (5xx).
    const createPlant = createCreatePlant({ ...table, logger: loggerOf('create-plant') });
    const post = (body: string) =>
      createPlant(createPostPlantsEvent({ body }), createLambdaContext());
    await post('{"id": 1, "name": "Fern"}');
    await post('{"id": 1, "name": "Other"}');
    // Every route function with its store gone: each answers 503 and logs it at error level.
    const nowhere = createDocumentClient({ endpoint: 'http://127.0.0.1:9' });
    const unavailable = (name: string) => ({
      documentClient: nowhere,
      tableName: table.tableName,
      logger: loggerOf(name),
    });
    const context = createLambdaContext();
    await createCreatePlant(unavailable('create-plant'))(
      createPostPlantsEvent({ body: '{"id": 2, "name": "Moss"}' }),
      context,
    );
    await createListPlants(unavailable('list-plants'))(createPlantsEvent('GET'), context);
    await createGetPlant(unavailable('get-plant'))(createPlantsEvent('GET', { id: '2' }), context);
    await createDeletePlant(unavailable('delete-plant'))(
      createPlantsEvent('DELETE', { id: '2' }),
      context,
    );
    const patch = (id: string) =>
      createPlantsEvent('PATCH', {
        id,
        body: '{"tag": "new"}',
        headers: { 'Content-Type': 'application/merge-patch+json', 'If-Match': '*' },
      });
    await createUpdatePlant(unavailable('update-plant'))(patch('2'), context);
    // Every webhook endpoint function with its store gone, the same.
    for (const route of routes.filter(isEndpointRoute)) {
      const name = functionDisplayName(route.function);
      const { createHandler } = (await import(`../../functions/${name}/create-handler.ts`)) as {
        createHandler: (dependencies: EndpointHandlerDependencies) => ProxyHandler;
      };
      const handler = createHandler({
        documentClient: nowhere,
        endpointsTableName: 'webhook-endpoints',
        logTableName: 'webhook-log',
        secretBox: localSecretBox(Buffer.alloc(32)),
        urlPolicy: localUrlPolicy,
        deliveries: { send: async () => {} },
        logger: loggerOf(name),
      });
      const body =
        route.method === 'POST' && route.path === '/webhook-endpoints'
          ? '{"url":"http://127.0.0.1:9/hooks"}'
          : route.path.endsWith('/recover')
            ? JSON.stringify({ since: new Date(Date.now() - 60_000).toISOString() })
            : route.method === 'PATCH'
              ? '{}'
              : null;
      await handler(
        createEndpointEvent(route, {
          body,
          headers: {
            'Content-Type':
              route.method === 'PATCH' ? 'application/merge-patch+json' : 'application/json',
            'If-Match': '*',
          },
        }),
        createLambdaContext(),
      );
    }
    nowhere.destroy();

    // list-plants: a page over an item another tool wrote.
    await table.documentClient.send(
      new PutCommand({ TableName: table.tableName, Item: { id: 1.5, name: 'not a plant' } }),
    );
    await createListPlants({ ...table, logger: loggerOf('list-plants') })(
      createPlantsEvent('GET'),
      createLambdaContext(),
    );

    // get-plant: an id whose item is not a plant (a name that is a number).
    await table.documentClient.send(
      new PutCommand({ TableName: table.tableName, Item: { id: 3n, name: 7 } }),
    );
    await createGetPlant({ ...table, logger: loggerOf('get-plant') })(
      createPlantsEvent('GET', { id: '3' }),
      createLambdaContext(),
    );
    // update-plant: a change of that item.
    await createUpdatePlant({ ...table, logger: loggerOf('update-plant') })(
      patch('3'),
      createLambdaContext(),
    );
    // delete-plant: a conditional delete of it, which reads it first.
    await createDeletePlant({ ...table, logger: loggerOf('delete-plant') })(
      createPlantsEvent('DELETE', { id: '3', headers: { 'If-Match': '"1"' } }),
      createLambdaContext(),
    );

    // replay-stream-failures: one kept batch with a new plant and an item that is not a plant.
    const keptBatch = JSON.stringify({
      payload: JSON.stringify({
        Records: [
          {
            eventID: 'c',
            eventName: 'INSERT',
            dynamodb: { NewImage: marshall({ id: 4n, name: 'Oak' }) },
          },
          {
            eventID: 'd',
            eventName: 'INSERT',
            dynamodb: { NewImage: marshall({ id: 1.5, name: 'x' }) },
          },
        ],
      }),
    });
    // An S3Client (the SDK's paginator accepts nothing else) answering from this one batch.
    const s3 = Object.assign(new S3Client({ region: 'us-east-1' }), {
      send: async (command: { input: { Key?: string } }) =>
        command.input.Key === undefined
          ? { Contents: [{ Key: 'aws/lambda/kept' }], IsTruncated: false }
          : { Body: { transformToString: async () => keptBatch } },
    });
    await createReplayHandler({
      s3: s3 as unknown as S3Client,
      bucketName: 'stream-failures',
      deliveries: sqsDeliveryQueue(
        { send: async () => ({}) } as never,
        'https://sqs.example/deliveries',
      ),
      subscriptions: fixedSubscriptions(['audit'].map((name) => subscriptionOf(name, {}))),
      logger: loggerOf('replay-stream-failures'),
    })(undefined, createLambdaContext());

    // webhook-fanout: a new plant, and an item that is not a plant.
    const fanout = createFanoutHandler({
      deliveries: sqsDeliveryQueue(
        { send: async () => ({}) } as never,
        'https://sqs.example/deliveries',
      ),
      subscriptions: fixedSubscriptions(['audit'].map((name) => subscriptionOf(name, {}))),
      logger: loggerOf('webhook-fanout'),
    });
    await fanout(
      {
        Records: [
          {
            eventID: 'a',
            eventName: 'INSERT',
            dynamodb: { NewImage: marshall({ id: 3n, name: 'Ivy' }), SequenceNumber: '1' },
          },
          {
            eventID: 'b',
            eventName: 'INSERT',
            dynamodb: { NewImage: marshall({ id: 1.5, name: 'x' }), SequenceNumber: '2' },
          },
        ],
      } as unknown as DynamoDBStreamEvent,
      createLambdaContext(),
    );

    // deliver-webhook: delivered, failed (retrying), failed for the last time (dead-lettered).
    const deliver = (schedule: number[]) =>
      createDeliverHandler({
        sqs: { send: async () => ({}) } as never,
        secretsManager: { send: async () => ({ SecretString: 'A'.repeat(48) }) } as never,
        retryQueueUrl: 'https://sqs.example/retries',
        deadLetterQueueUrl: 'https://sqs.example/dead-letters',
        subscribers: [{ name: 'audit', url: subscriberUrl, secretArn: 'arn:secret' }],
        retrySchedule: schedule,
        logger: loggerOf('deliver-webhook'),
      });
    const message = deliveryEvent(['m'], '{"id":3,"name":"Ivy"}');
    await deliver([5])(message, createLambdaContext());
    subscriberAnswer = 500;
    await deliver([3600])(message, createLambdaContext());
    await deliver([])(message, createLambdaContext());
    // deliver-webhook, to an endpoint: a failure 5 days into a run of them, which disables it.
    const endpointTables = {
      endpoints: `metric-endpoints-${process.pid}`,
      log: `metric-log-${process.pid}`,
    };
    await createWebhookEndpointTablesIfMissing(table.documentClient, endpointTables);
    const secretBox = localSecretBox(randomBytes(32));
    const endpoint = { id: 'ep_00000000000000000000000001', owner: 'client-1' };
    const now = Date.now();
    await putNewEndpoint(
      {
        ...endpoint,
        url: subscriberUrl,
        events: ['plant.created'],
        format: 'plant',
        enabled: true,
        createdAt: new Date(now - 6 * 86_400_000).toISOString(),
        version: 1,
        secret: await secretBox.seal(`whsec_${'A'.repeat(48)}`, endpoint.id),
        failingSince: now - 5 * 86_400_000 - 1000,
      },
      { documentClient: table.documentClient, endpointsTableName: endpointTables.endpoints },
    );
    await createDeliverHandler({
      sqs: { send: async () => ({}) } as never,
      secretsManager: { send: async () => ({}) } as never,
      retryQueueUrl: 'https://sqs.example/retries',
      deadLetterQueueUrl: 'https://sqs.example/dead-letters',
      subscribers: [],
      endpoints: {
        table: {
          documentClient: table.documentClient,
          endpointsTableName: endpointTables.endpoints,
        },
        log: { documentClient: table.documentClient, logTableName: endpointTables.log },
        secretBox,
        urlPolicy: localUrlPolicy,
      },
      logger: loggerOf('deliver-webhook'),
    })(
      {
        Records: [
          deliveryRecord(
            'e',
            JSON.stringify(
              firstDeliveryMessage(
                { webhookId: 'msg_e', payload: '{"id":3,"name":"Ivy"}' },
                `endpoint:${endpoint.id}`,
                now,
                { ...endpoint, type: 'plant.created' },
              ),
            ),
          ),
        ],
      },
      createLambdaContext(),
    );

    // authorizer: an invalid token (refused), and keys that cannot be fetched (a failure).
    const authorizer = createAuthorizer(
      {
        issuer: 'https://issuer.example',
        audiences: ['plant-store'],
        audienceClaim: 'aud',
        jwksUri: 'http://127.0.0.1:9/jwks.json',
      },
      { logger: loggerOf('authorizer') },
    );
    const methodArn = 'arn:aws:execute-api:us-east-1:123456789012:abc/dev/GET/plants';
    const authorize = (token: string) =>
      authorizer(
        { type: 'TOKEN', methodArn, authorizationToken: `Bearer ${token}` },
        createLambdaContext(),
      ).catch(() => undefined);
    await authorize('not-a-jwt');
    const header = Buffer.from('{"alg":"RS256","kid":"k"}').toString('base64url');
    const claims = Buffer.from(
      JSON.stringify({
        iss: 'https://issuer.example',
        aud: 'plant-store',
        sub: 's',
        iat: Math.floor(Date.now() / 1000),
        exp: Math.floor(Date.now() / 1000) + 600,
      }),
    ).toString('base64url');
    await authorize(`${header}.${claims}.c2ln`);
  }, 60_000);

  afterAll(async () => {
    delete process.env.AWS_LAMBDA_FUNCTION_VERSION;
    delete process.env._X_AMZN_TRACE_ID;
    await table?.remove();
    subscriber?.close();
  });

  it('names the invocation on every line of every function, in the same fields', () => {
    expect([...lines.keys()].sort()).toEqual(
      Object.keys(functionSettings).map(functionDisplayName).sort(),
    );
    for (const [name, written] of lines) {
      for (const line of written) {
        expect({ name, entry: JSON.parse(line) }).toEqual({
          name,
          entry: expect.objectContaining({
            service: name,
            awsRequestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
            traceId: 'Root=1-67891233-abcdef012345678912345678;Sampled=1',
            coldStart: expect.any(Boolean),
            functionVersion: '7',
          }),
        });
      }
    }
  });

  /** The function whose log group a filter reads: `CreatePlantLogGroup…` → `create-plant`. */
  const functionOf = (filter: { [key: string]: { LogGroupName: { Ref: string } } }) =>
    functionDisplayName(String(filter.Properties?.LogGroupName.Ref).replace(/LogGroup.*$/, ''));

  /**
   * The runtime's own report of an invocation in the JSON log format, in every function's log
   * group: with `initDurationMs` when the invocation started the instance, without it otherwise
   * (Lambda developer guide, "Configuring JSON and plain text log formats").
   */
  const platformReports = [true, false].map((cold) =>
    JSON.stringify({
      time: '2026-11-25T10:00:02.000Z',
      type: 'platform.report',
      record: {
        requestId: '6f7f0961-f834-4211-8a7a-f6fe80b88d56',
        metrics: {
          durationMs: 41.2,
          billedDurationMs: 42,
          memorySizeMB: 1024,
          maxMemoryUsedMB: 88,
          ...(cold ? { initDurationMs: 171.4 } : {}),
        },
        status: 'success',
      },
    }),
  );

  /** What each metric must count: a line it must match, and lines it must not. */
  const expectations: Record<string, { matches: RegExp; never?: RegExp }> = {
    PlantsCreated: { matches: /"newPlants":1/ },
    PlantConflicts: { matches: /"errorCode":40009/, never: /"statusCode":200/ },
    WebhooksDelivered: { matches: /webhook delivered/, never: /retrying|dead-lettered/ },
    WebhookRetries: { matches: /retrying/, never: /delivered"|dead-lettered/ },
    WebhookWaitAtNextAttempt: { matches: /retrying/, never: /delivered"|dead-lettered/ },
    WebhooksDeadLettered: { matches: /dead-lettered/, never: /retrying|delivered"/ },
    ItemsNotPlants: { matches: /"itemsNotPlants":1/, never: /"newPlants"|"statusCode"/ },
    AuthorizerFailures: { matches: /failing closed/, never: /Rejected the bearer token/ },
    AuthorizerRefusals: { matches: /Rejected the bearer token/ },
    ServerErrors: { matches: /"statusCode":50[03]/, never: /"statusCode":200/ },
    EndpointDeliveries: {
      matches: /"subscriber":"endpoint:.*"outcome":"retrying"/,
      never: /"subscriber":"audit"/,
    },
    EndpointsDisabled: { matches: /webhook endpoint disabled/, never: /retrying/ },
    InitDuration: { matches: /"initDurationMs":171\.4/, never: /"maxMemoryUsedMB":88}/ },
  };

  it.each(Object.keys(stages))(
    'reads, in the %s stage, exactly what the functions log',
    (stage) => {
      const filters = Object.values(
        synthesizedStage(stage).template.findResources('AWS::Logs::MetricFilter') ?? {},
      );
      expect(filters.length).toBeGreaterThan(8);
      for (const filter of filters) {
        const [transformation] = filter.Properties.MetricTransformations;
        const metricName = String(transformation.MetricName);
        // The InitDuration metrics are named after their function, in a namespace of their own.
        const key = String(transformation.MetricNamespace).endsWith('/InitDuration')
          ? 'InitDuration'
          : Object.keys(expectations).find(
              (name) => metricName === name || metricName.endsWith(name),
            );
        if (key === undefined) throw new Error(`No real log line is checked for ${metricName}`);
        const expected = expectations[key] ?? { matches: /$^/ };
        const written = [...(lines.get(functionOf(filter)) ?? []), ...platformReports];
        const pattern = String(filter.Properties.FilterPattern);
        const matched = written.filter((line) => matchesFilterPattern(pattern, line));
        expect({
          metricName,
          matched: matched.some((line) => expected.matches.test(line)),
        }).toEqual({
          metricName,
          matched: true,
        });
        if (expected.never !== undefined) {
          const wrong = matched.filter((line) => expected.never?.test(line));
          expect({ metricName, wrong }).toEqual({ metricName, wrong: [] });
        }
        // The value and every dimension are fields of each matched line.
        const fields = [
          transformation.MetricValue,
          ...(transformation.Dimensions ?? []).map(
            (dimension: { Value: string }) => dimension.Value,
          ),
        ].filter((value: string) => value.startsWith('$.'));
        for (const line of matched) {
          const event = JSON.parse(line) as Record<string, unknown>;
          for (const field of fields)
            expect({ metricName, field, value: valueAt(event, field) }).toEqual({
              metricName,
              field,
              value: expect.anything(),
            });
        }
      }
    },
  );
});

/** The value a JSON selector (`$.a.b`) names in a log event. */
function valueAt(event: Record<string, unknown>, selector: string): unknown {
  return selector
    .slice(2)
    .split('.')
    .reduce<unknown>((value, key) => (value as Record<string, unknown> | undefined)?.[key], event);
}
