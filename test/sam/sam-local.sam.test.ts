/**
 * `sam local invoke` and `sam local start-api`, run by the real SAM CLI (the project's pinned
 * one) on the template `npx cdk synth -c stage=dev` writes, as docs/running-locally.md's recipe
 * runs them: a private Docker engine, the stand-in Lambda image (arm64, through qemu on other
 * machines), and the services the containers call on the bridge's gateway (`npm run
 * sam:services`). Every function with a sample event answers what the same event answers
 * in-process; the API serves a plant's whole life behind its TOKEN authorizer, each answer held
 * to openapi.yaml. The figures (engine, image, each invoke, start-api) are printed.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { GetUsagePlanKeysCommand, GetUsagePlansCommand } from '@aws-sdk/client-api-gateway';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sampleSubscriber, samUsagePlanName } from '../../beds/sam/sam-services.ts';
import { clientKeyValue, sharedClient } from '../../functions/authorizer/client-keys.ts';
import { readAuthorizerConfig } from '../../functions/authorizer/config.ts';
import { createHandler as createAuthorizer } from '../../functions/authorizer/create-handler.ts';
import { createHandler as createDeliverHandler } from '../../functions/deliver-webhook/create-handler.ts';
import { createHandler as createReplayHandler } from '../../functions/replay-stream-failures/create-handler.ts';
import {
  functionDisplayName,
  routeFunctionFolder,
  routeFunctionNames,
} from '../../functions/shared/http/routes.ts';
import type { PlantsFunctionDependencies } from '../../functions/shared/plants/plants-function.ts';
import { createDocumentClient } from '../../functions/shared/platform/dynamodb.ts';
import { sqsDeliveryQueue } from '../../functions/shared/webhooks/delivery-queue.ts';
import { subscriptionOf } from '../../functions/shared/webhooks/plant-events.ts';
import { fixedSubscriptions } from '../../functions/shared/webhooks/queue-deliveries.ts';
import { deployedUrlPolicy } from '../../functions/webhook-endpoints/endpoint-url.ts';
import { kmsSecretBox } from '../../functions/webhook-endpoints/secret-box.ts';
import { createHandler as createFanoutHandler } from '../../functions/webhook-fanout/create-handler.ts';
import { type FunctionSettings, functionSettings } from '../../infra/function-settings.ts';
import { repositoryRoot } from '../../infra/plant-store-function.ts';
import type { RouteFunctionDependencies } from '../../local/route-functions.ts';
import { createPlantsTableIfMissing } from '../../local/tables.ts';
import { expectDocumentedResponse } from '../api/openapi.ts';
import {
  comparable,
  eventFile,
  logicalIdOf,
  pascalCase,
  quiet,
  readEvent,
  type SamApi,
  samInvoke,
  started,
  startFileSamApi,
  useSamSuite,
  work,
} from './sam-suite.ts';

useSamSuite();

/** The plants' route functions, and the webhook endpoints'. */
const plantFunctions = routeFunctionNames.filter(
  (name) => (functionSettings[name] as FunctionSettings).endpointAccess === undefined,
);

describe('sam local invoke', () => {
  it('answers every plant function\u2019s sample event as the same event answers in-process, in the order of a plant\u2019s life', async () => {
    const { services: local } = started();
    const documentClient = createDocumentClient({ url: local.dynamoDbUrl });
    const inProcessTable = 'plants-in-process';
    await createPlantsTableIfMissing(documentClient, inProcessTable);
    const variables = local.variables[logicalIdOf(pascalCase(plantFunctions[0] as string))];
    // create, list, get, update, delete: the route table's order.
    for (const name of plantFunctions) {
      const factory = (await import(
        path.join(repositoryRoot, routeFunctionFolder(name), 'create-handler.ts')
      )) as {
        createHandler: (
          dependencies: PlantsFunctionDependencies,
        ) => (event: unknown, context: unknown) => Promise<unknown>;
      };
      const inProcess = await factory.createHandler({
        documentClient,
        tableName: inProcessTable,
        allowedOrigins: (variables?.CORS_ALLOWED_ORIGINS ?? '').split(',').filter(Boolean),
        logger: quiet,
      })(readEvent(functionDisplayName(name)), { awsRequestId: 'in-process' });
      const viaSam = await samInvoke(pascalCase(name), eventFile(functionDisplayName(name)));
      expect({ name, answer: comparable(viaSam) }).toEqual({ name, answer: comparable(inProcess) });
    }
    documentClient.destroy();
  }, 300_000);

  it('answers the authorizer\u2019s event with a token the local issuer signed as the authorizer does in-process', async () => {
    const { services: local } = started();
    const event = {
      ...readEvent('authorizer-token'),
      authorizationToken: `Bearer ${local.signToken({ subject: 'sam-client', scope: 'plants/read' })}`,
    };
    const eventPath = path.join(work, 'authorizer-token.json');
    writeFileSync(eventPath, JSON.stringify(event));
    const variables = local.variables[logicalIdOf('Authorizer')] ?? {};
    // In-process, the keys come from the same JWKS, asked at the same address.
    const authorizer = () =>
      createAuthorizer(readAuthorizerConfig({ ...variables, AWS_SAM_LOCAL: 'true' }), {
        logger: quiet,
      });
    // The client's own key once it is in moto's plan. A loaded machine can take a registration
    // past its 1.5 s budget: that request is counted as the shared client (documented), and a
    // later one, in a new container, finds the key (a claim left half-done goes stale in 30 s).
    const sharedKey = clientKeyValue(samUsagePlanName, sharedClient);
    const withOwnKey = async <Answer>(invoke: () => Promise<Answer>) => {
      for (let attempt = 1; ; attempt += 1) {
        const answer = await invoke();
        const key = (answer as { usageIdentifierKey?: string }).usageIdentifierKey;
        if (key !== sharedKey || attempt === 8) return answer;
        await new Promise((resolve) => setTimeout(resolve, 5_000));
      }
    };
    const inProcess = await withOwnKey(() => authorizer()(event));
    const viaSam = await withOwnKey(() => samInvoke('Authorizer', eventPath));
    // The same policy, and the same key, which a container added to moto's plan.
    expect(inProcess.usageIdentifierKey).not.toBe(sharedKey);
    expect(viaSam).toEqual(inProcess);
    expect(JSON.stringify(viaSam)).toContain('"Effect":"Allow"');
    const { items: plans = [] } = await local.moto.apiGateway.send(new GetUsagePlansCommand({}));
    const plan = plans.find((candidate) => candidate.name === samUsagePlanName);
    const { items: keys = [] } = await local.moto.apiGateway.send(
      new GetUsagePlanKeysCommand({ usagePlanId: plan?.id as string }),
    );
    expect(keys.map((key) => key.value)).toEqual([inProcess.usageIdentifierKey]);
  }, 240_000);

  it('answers the fan-out\u2019s stream event and the delivery\u2019s SQS event as in-process: queued, then delivered and verified', async () => {
    const { services: local } = started();
    const streamEvent = readEvent('webhook-fanout');
    const subscriptions = [
      subscriptionOf(sampleSubscriber, { format: 'plant', events: ['plant.created'] }),
    ];
    const inProcessFanout = await createFanoutHandler({
      deliveries: sqsDeliveryQueue(local.moto.sqs, local.queues.deliveries),
      subscriptions: fixedSubscriptions(subscriptions),
      logger: quiet,
    })(streamEvent);
    const viaSamFanout = await samInvoke('WebhookFanout', eventFile('webhook-fanout'));
    expect(viaSamFanout).toEqual(inProcessFanout);
    // Both queued the same delivery, the one the delivery's sample event carries.
    const { Messages = [] } = await local.moto.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: local.queues.deliveries, MaxNumberOfMessages: 10 }),
    );
    const queued = Messages.map((message) => JSON.parse(message.Body ?? '{}'));
    const sample = JSON.parse(readEvent('deliver-webhook').Records[0].body);
    expect(
      queued.map(({ webhookId, payload, subscriber }) => ({ webhookId, payload, subscriber })),
    ).toEqual([
      { webhookId: sample.webhookId, payload: sample.payload, subscriber: sample.subscriber },
      { webhookId: sample.webhookId, payload: sample.payload, subscriber: sample.subscriber },
    ]);

    const viaSamDeliver = await samInvoke('DeliverWebhook', eventFile('deliver-webhook'));
    const deliverVariables = local.variables[logicalIdOf('DeliverWebhook')] ?? {};
    const inProcessDeliver = await createDeliverHandler({
      sqs: local.moto.sqs,
      secretsManager: local.moto.secretsManager,
      retryQueueUrl: local.queues.retries,
      deadLetterQueueUrl: local.queues.deadLetters,
      subscribers: JSON.parse(deliverVariables.SUBSCRIBERS ?? '[]'),
      logger: quiet,
    })(readEvent('deliver-webhook'));
    expect(viaSamDeliver).toEqual({ batchItemFailures: [] });
    expect(viaSamDeliver).toEqual(inProcessDeliver);
    // The receiver on the bridge got it twice (SAM's container, then in-process), signed.
    expect(local.receiver.deliveries.map(({ verified, body }) => ({ verified, body }))).toEqual([
      { verified: true, body: sample.payload },
      { verified: true, body: sample.payload },
    ]);
  }, 180_000);

  it('answers the replay\u2019s event as in-process: nothing kept, nothing replayed', async () => {
    const { services: local } = started();
    const variables = local.variables[logicalIdOf('ReplayStreamFailures')] ?? {};
    const inProcess = await createReplayHandler({
      s3: local.moto.s3,
      deliveries: sqsDeliveryQueue(local.moto.sqs, local.queues.deliveries),
      bucketName: variables.STREAM_FAILURES_BUCKET ?? '',
      subscriptions: fixedSubscriptions([]),
      logger: quiet,
    })();
    const viaSam = await samInvoke('ReplayStreamFailures', eventFile('replay-stream-failures'));
    expect(viaSam).toEqual({
      replayedBatches: 0,
      newPlants: 0,
      remainingBatches: 0,
      oldestKeptMinutes: 0,
    });
    expect(viaSam).toEqual(inProcess);
  }, 120_000);

  it('runs every webhook endpoint function on its sample event, each read answering as in-process', async () => {
    const { services: local } = started();
    // The sample events name a sample endpoint: each is run for the one the create made.
    const created = (await samInvoke(
      'CreateWebhookEndpoint',
      eventFile('create-webhook-endpoint'),
    )) as {
      statusCode: number;
      body: string;
    };
    expect(created.statusCode).toBe(201);
    const { id } = JSON.parse(created.body) as { id: string };
    const forCreated = (name: string) => {
      const event = readEvent(name);
      const file = path.join(work, `${name}.json`);
      writeFileSync(
        file,
        JSON.stringify({
          ...event,
          path: String(event.path).replace(/ep_\w+/, id),
          pathParameters: event.pathParameters === null ? null : { endpointId: id },
          requestContext: {
            ...event.requestContext,
            path: String(event.requestContext.path).replace(/ep_\w+/, id),
          },
          ...(name === 'recover-webhook-endpoint'
            ? { body: JSON.stringify({ since: new Date(Date.now() - 60_000).toISOString() }) }
            : {}),
        }),
      );
      return { event: JSON.parse(readFileSync(file, 'utf8')), file };
    };
    const variables = local.variables[logicalIdOf('GetWebhookEndpointSecret')] ?? {};
    const documentClient = createDocumentClient({ url: local.dynamoDbUrl });
    const inProcess = async (name: string, event: unknown) => {
      const factory = (await import(
        path.join(repositoryRoot, 'functions', name, 'create-handler.ts')
      )) as {
        createHandler: (
          dependencies: RouteFunctionDependencies,
        ) => (event: unknown, context: unknown) => Promise<unknown>;
      };
      return factory.createHandler({
        documentClient,
        tableName: 'plants',
        urlPolicy: deployedUrlPolicy,
        endpointsTableName: local.endpointTables.endpoints,
        logTableName: local.endpointTables.log,
        secretBox: kmsSecretBox(local.moto.kms, variables.SECRETS_KEY_ID ?? '', {
          documentClient,
          tableName: local.endpointTables.endpoints,
        }),
        deliveries: sqsDeliveryQueue(local.moto.sqs, local.queues.deliveries),
        allowedOrigins: (variables.CORS_ALLOWED_ORIGINS ?? '').split(',').filter(Boolean),
        logger: quiet,
      })(event, { awsRequestId: 'in-process' });
    };
    const statuses: Record<string, number> = {};
    for (const name of [
      'list-webhook-endpoints',
      'get-webhook-endpoint',
      'get-webhook-endpoint-secret',
      'list-webhook-endpoint-attempts',
      'update-webhook-endpoint',
      'rotate-webhook-endpoint-secret',
      'test-webhook-endpoint',
      'recover-webhook-endpoint',
      'delete-webhook-endpoint',
    ]) {
      const { event, file } = forCreated(name);
      const viaSam = (await samInvoke(
        pascalCase(name.replace(/-(\w)/g, (_, letter: string) => letter.toUpperCase())),
        file,
      )) as { statusCode: number };
      statuses[name] = viaSam.statusCode;
      // The reads answer alike; each change is made once, by SAM's container.
      if (/^(list|get)-/.test(name)) {
        expect({ name, answer: comparable(viaSam) }).toEqual({
          name,
          answer: comparable(await inProcess(name, event)),
        });
      }
    }
    documentClient.destroy();
    expect(statuses).toEqual({
      'list-webhook-endpoints': 200,
      'get-webhook-endpoint': 200,
      'get-webhook-endpoint-secret': 200,
      'list-webhook-endpoint-attempts': 200,
      'update-webhook-endpoint': 200,
      'rotate-webhook-endpoint-secret': 200,
      'test-webhook-endpoint': 202,
      'recover-webhook-endpoint': 202,
      'delete-webhook-endpoint': 204,
    });
  }, 300_000);
});

describe('sam local start-api', () => {
  let api: SamApi | undefined;
  const call = (...args: Parameters<SamApi['call']>) => {
    if (api === undefined) throw new Error('sam local start-api did not start');
    return api.call(...args);
  };

  beforeAll(async () => {
    api = await startFileSamApi();
  }, 240_000);

  afterAll(async () => {
    await api?.stop();
  });

  /**
   * An answer held to openapi.yaml, but for the request id: API Gateway adds `x-amzn-RequestId`
   * to every answer, SAM to none (docs/running-locally.md).
   */
  const documented = async (response: Response, operationId: string) => {
    expect(response.headers.get('x-amzn-requestid')).toBeNull();
    return expectDocumentedResponse(response, operationId, { without: ['x-amzn-RequestId'] });
  };

  it('creates, reads, lists, changes and deletes a plant through the TOKEN authorizer, every answer as openapi.yaml says', async () => {
    const token = started().services.signToken();
    const created = await call('POST', '/plants', token, '{"id":7,"name":"Fern","tag":"shade"}');
    expect(created.status).toBe(200);
    expect(await documented(created, 'createPlant')).toEqual({
      name: 'Fern',
      tag: 'shade',
    });
    const read = await call('GET', '/plants/7', token);
    expect(await documented(read, 'getPlant')).toEqual({
      id: 7,
      name: 'Fern',
      tag: 'shade',
    });
    const etag = read.headers.get('etag') ?? '';
    expect(etag).toMatch(/^"\d+"$/);
    const listed = await call('GET', '/plants?limit=10', token);
    expect(await documented(listed, 'listPlants')).toEqual([{ id: 7, name: 'Fern', tag: 'shade' }]);
    const patched = await call('PATCH', '/plants/7', token, '{"tag":"sun"}', {
      'Content-Type': 'application/merge-patch+json',
      'If-Match': etag,
    });
    expect(await documented(patched, 'patchPlant')).toEqual({
      id: 7,
      name: 'Fern',
      tag: 'sun',
    });
    const stale = await call('PATCH', '/plants/7', token, '{"tag":"moss"}', {
      'Content-Type': 'application/merge-patch+json',
      'If-Match': etag,
    });
    expect(await documented(stale, 'patchPlant')).toMatchObject({ error: 41200 });
    const deleted = await call('DELETE', '/plants/7', token);
    expect(deleted.status).toBe(204);
    await documented(deleted, 'deletePlant');
    const gone = await call('GET', '/plants/7', token);
    expect(await documented(gone, 'getPlant')).toMatchObject({ error: 40401 });
  }, 180_000);

  it('refuses a request without a token (401) and a token without the scope (403), in SAM\u2019s own bodies', async () => {
    const missing = await call('GET', '/plants', undefined);
    // API Gateway answers these with the gateway responses (the Error shape); SAM does not
    // emulate gateway responses and answers its own (docs/running-locally.md says so).
    expect([missing.status, await missing.json()]).toEqual([401, { message: 'Unauthorized' }]);
    const readOnly = started().services.signToken({ scope: 'plants/read' });
    const refused = await call('POST', '/plants', readOnly, '{"id":8,"name":"Moss"}');
    expect([refused.status, await refused.json()]).toEqual([
      403,
      { message: 'User is not authorized to access this resource' },
    ]);
    // An invalid token: the authorizer answers Unauthorized by throwing, which API Gateway turns
    // into 401 and SAM into 502.
    const invalid = await call('GET', '/plants', 'not-a-token');
    expect([invalid.status, await invalid.json()]).toEqual([
      502,
      { message: 'Internal server error' },
    ]);
  }, 120_000);
});
