/**
 * Every function of the stack run once in each way that writes a line a metric filter reads: the
 * route functions against a test table and against a store that is not there, the webhook
 * functions against a receiver on 127.0.0.1, the authorizer with a bad token and unreachable
 * keys. Each function logs through `loggerOf(its display name)`.
 */
import { randomBytes } from 'node:crypto';
import { S3Client } from '@aws-sdk/client-s3';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { APIGatewayProxyEvent, DynamoDBStreamEvent } from 'aws-lambda';
import { createHandler as createAuthorizer } from '../../functions/authorizer/create-handler.ts';
import { createHandler as createCreatePlant } from '../../functions/create-plant/create-handler.ts';
import { createHandler as createDeletePlant } from '../../functions/delete-plant/create-handler.ts';
import { createHandler as createDeliverHandler } from '../../functions/deliver-webhook/create-handler.ts';
import { createHandler as createGetPlant } from '../../functions/get-plant/create-handler.ts';
import { createHandler as createListPlants } from '../../functions/list-plants/create-handler.ts';
import { createHandler as createReplayHandler } from '../../functions/replay-stream-failures/create-handler.ts';
import { functionDisplayName, routes } from '../../functions/shared/http/routes.ts';
import { createDocumentClient } from '../../functions/shared/platform/dynamodb.ts';
import type { Logger } from '../../functions/shared/platform/logger.ts';
import { firstDeliveryMessage } from '../../functions/shared/webhooks/delivery-message.ts';
import { sqsDeliveryQueue } from '../../functions/shared/webhooks/delivery-queue.ts';
import { subscriptionOf } from '../../functions/shared/webhooks/plant-events.ts';
import { fixedSubscriptions } from '../../functions/shared/webhooks/queue-deliveries.ts';
import { createHandler as createUpdatePlant } from '../../functions/update-plant/create-handler.ts';
import { putNewEndpoint } from '../../functions/webhook-endpoints/endpoint-changes.ts';
import { localUrlPolicy } from '../../functions/webhook-endpoints/endpoint-url.ts';
import { localSecretBox } from '../../functions/webhook-endpoints/secret-box.ts';
import { createHandler as createFanoutHandler } from '../../functions/webhook-fanout/create-handler.ts';
import { isEndpointRoute } from '../../infra/throttling.ts';
import { startJwksServer } from '../../local/jwks-server.ts';
import type { RouteFunctionDependencies } from '../../local/route-functions.ts';
import { createWebhookEndpointTablesIfMissing } from '../../local/tables.ts';
import type { Jwks } from '../../local/token-issuer.ts';
import { createSigningKey, signToken } from '../functions/authorizer/token-factory.ts';
import {
  createEndpointEvent,
  createLambdaContext,
  createPlantsEvent,
  createPostPlantsEvent,
} from '../support/api-gateway-event.ts';
import { deliveryEvent, deliveryRecord } from '../support/sqs-event.ts';
import type { TestTable } from '../support/test-store.ts';

type ProxyHandler = (
  event: APIGatewayProxyEvent,
  context: ReturnType<typeof createLambdaContext>,
) => Promise<unknown>;

export interface LogLineBed {
  readonly table: TestTable;
  /** A receiver on 127.0.0.1 for the deliveries, and how to make it fail. */
  readonly subscriberUrl: string;
  failSubscriber(): void;
  readonly loggerOf: (functionName: string) => Logger;
}

export async function writeEveryLogLine(bed: LogLineBed): Promise<void> {
  await writePlantFunctionLines(bed);
  await writeEndpointFunctionLines(bed);
  await writeWebhookLines(bed);
  await writeAuthorizerLines(bed);
}

const patch = (id: string) =>
  createPlantsEvent('PATCH', {
    id,
    body: '{"tag": "new"}',
    headers: { 'Content-Type': 'application/merge-patch+json', 'If-Match': '*' },
  });

/** Creates, a conflict, every route function with its store gone, items that are not plants. */
async function writePlantFunctionLines({ table, loggerOf }: LogLineBed): Promise<void> {
  // create-plant: a create, a conflict, and a store that is not there (5xx).
  const createPlant = createCreatePlant({ ...table, logger: loggerOf('create-plant') });
  const post = (body: string) =>
    createPlant(createPostPlantsEvent({ body }), createLambdaContext());
  await post('{"id": 1, "name": "Fern"}');
  await post('{"id": 1, "name": "Other"}');
  // Every route function with its store gone: each answers 503 and logs it at error level.
  const nowhere = createDocumentClient({ url: 'http://127.0.0.1:9' });
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
  await createUpdatePlant(unavailable('update-plant'))(patch('2'), context);
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
}

/** Every webhook endpoint function with its store gone: each answers 503 and logs it. */
async function writeEndpointFunctionLines({ loggerOf }: LogLineBed): Promise<void> {
  const nowhere = createDocumentClient({ url: 'http://127.0.0.1:9' });
  for (const route of routes.filter(isEndpointRoute)) {
    const name = functionDisplayName(route.function);
    const { createHandler } = (await import(`../../functions/${name}/create-handler.ts`)) as {
      createHandler: (dependencies: RouteFunctionDependencies) => ProxyHandler;
    };
    const handler = createHandler({
      documentClient: nowhere,
      tableName: 'plants',
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
}

/** The fan-out, the replay and the delivery, to a stage subscriber and to an endpoint. */
async function writeWebhookLines({
  table,
  subscriberUrl,
  failSubscriber,
  loggerOf,
}: LogLineBed): Promise<void> {
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
        {
          eventID: 'e',
          eventName: 'INSERT',
          dynamodb: { NewImage: marshall({ id: 5n, name: 'Refused' }) },
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
  // A queue that refuses, as the sender's fault, the messages of plant 5.
  const refusingPlantFive = {
    send: async (command: { input: { Entries?: { MessageBody?: string }[] } }) =>
      command.input.Entries?.some((entry) => entry.MessageBody?.includes('\\"id\\":5'))
        ? { Failed: [{ Id: '0', SenderFault: true, Code: 'InvalidMessageContents' }] }
        : {},
  };
  await createReplayHandler({
    s3: s3 as unknown as S3Client,
    bucketName: 'stream-failures',
    deliveries: sqsDeliveryQueue(refusingPlantFive as never, 'https://sqs.example/deliveries'),
    subscriptions: fixedSubscriptions(['audit'].map((name) => subscriptionOf(name, {}))),
    logger: loggerOf('replay-stream-failures'),
  })(undefined, createLambdaContext());

  // webhook-fanout: a new plant, an item that is not a plant, and a plant the queue refuses.
  const fanout = createFanoutHandler({
    deliveries: sqsDeliveryQueue(refusingPlantFive as never, 'https://sqs.example/deliveries'),
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
        {
          eventID: 'e',
          eventName: 'INSERT',
          dynamodb: { NewImage: marshall({ id: 5n, name: 'Refused' }), SequenceNumber: '3' },
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
  failSubscriber();
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
    {
      documentClient: table.documentClient,
      endpointsTableName: endpointTables.endpoints,
      logTableName: endpointTables.log,
    },
  );
  await createDeliverHandler({
    sqs: { send: async () => ({}) } as never,
    secretsManager: { send: async () => ({}) } as never,
    retryQueueUrl: 'https://sqs.example/retries',
    deadLetterQueueUrl: 'https://sqs.example/dead-letters',
    subscribers: [],
    endpoints: {
      stores: {
        documentClient: table.documentClient,
        endpointsTableName: endpointTables.endpoints,
        logTableName: endpointTables.log,
      },
      secretBox,
      urlPolicy: localUrlPolicy,
    },
    logger: loggerOf('deliver-webhook'),
  })(
    {
      Records: [
        deliveryRecord(
          'e',
          // From the retry queue: a failing endpoint's first attempts are made there.
          JSON.stringify({
            ...firstDeliveryMessage(
              { webhookId: 'msg_e', payload: '{"id":3,"name":"Ivy"}' },
              `endpoint:${endpoint.id}`,
              now,
              { ...endpoint, type: 'plant.created' },
            ),
            sidelined: true,
          }),
        ),
      ],
    },
    createLambdaContext(),
  );
}

async function writeAuthorizerLines({ loggerOf }: LogLineBed): Promise<void> {
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

  // A valid token whose client key API Gateway's control plane does not take (a warning).
  const key = createSigningKey('RS256', 'log-line-bed');
  const jwks = await startJwksServer({ keys: [key.publicJwk] } as unknown as Jwks);
  try {
    const registering = createAuthorizer(
      {
        issuer: 'https://issuer.example',
        audiences: ['plant-store'],
        audienceClaim: 'aud',
        jwksUri: jwks.jwksUri,
        usagePlanName: 'plant-store-dev-clients',
      },
      {
        logger: loggerOf('authorizer'),
        registerClientKey: async () => {
          throw new Error('CreateApiKey answered 429: Too Many Requests');
        },
      },
    );
    await registering(
      {
        type: 'TOKEN',
        methodArn,
        authorizationToken: `Bearer ${signToken(key, {
          iss: 'https://issuer.example',
          aud: 'plant-store',
          sub: 'client-1',
          scope: 'plants/read',
          iat: Math.floor(Date.now() / 1000),
          exp: Math.floor(Date.now() / 1000) + 600,
        })}`,
      },
      createLambdaContext(),
    );
  } finally {
    await jwks.close();
  }
}
