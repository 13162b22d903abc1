/**
 * `sam local invoke` and `sam local start-api`, run by the real SAM CLI (the project's pinned
 * one) on the template `npx cdk synth -c stage=dev` writes, as docs/running-locally.md's recipe
 * runs them: a private Docker engine, the stand-in Lambda image (arm64, through qemu on other
 * machines), and the services the containers call on the bridge's gateway (`npm run
 * sam:services`). Every function with a sample event answers what the same event answers
 * in-process; the API serves a plant's whole life behind its TOKEN authorizer, each answer held
 * to openapi.yaml. The figures (engine, image, each invoke, start-api) are printed.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readAuthorizerConfig } from '../../functions/authorizer/config.ts';
import { createHandler as createAuthorizer } from '../../functions/authorizer/create-handler.ts';
import { createHandler as createDeliverHandler } from '../../functions/deliver-webhook/create-handler.ts';
import { createHandler as createReplayHandler } from '../../functions/replay-stream-failures/create-handler.ts';
import { createDocumentClient } from '../../functions/shared/dynamodb.ts';
import { createLogger } from '../../functions/shared/logger.ts';
import {
  functionDisplayName,
  routeFunctionFolder,
  routeFunctionNames,
} from '../../functions/shared/routes.ts';
import type { TableHandlerDependencies } from '../../functions/shared/table-function.ts';
import { sqsDeliveryQueue } from '../../functions/shared/webhooks/delivery-queue.ts';
import { subscriptionOf } from '../../functions/shared/webhooks/plant-events.ts';
import { fixedSubscriptions } from '../../functions/shared/webhooks/queue-deliveries.ts';
import { createHandler as createFanoutHandler } from '../../functions/webhook-fanout/create-handler.ts';
import { repositoryRoot } from '../../infra/plant-store-function.ts';
import { type DockerEngine, startDockerEngine } from '../../local/sam/docker-engine.ts';
import { samCommand } from '../../local/sam/sam-cli.ts';
import {
  type SamServices,
  type SynthesizedTemplate,
  sampleSubscriber,
  startSamServices,
} from '../../local/sam/sam-services.ts';
import { ensureStandInImage, type StandInImage } from '../../local/sam/stand-in-image.ts';
import { createPlantsTableIfMissing } from '../../local/tables.ts';
import { expectDocumentedResponse } from '../api/openapi.ts';

const run = promisify(execFile);
const quiet = createLogger({}, () => {});
const figures: Record<string, number | string> = {};

let engine: DockerEngine | undefined;
let image: StandInImage;
let services: SamServices | undefined;
let work: string;
let templatePath: string;
let template: SynthesizedTemplate;

/** Seconds since `started`, one decimal. */
const since = (started: number) => Math.round((performance.now() - started) / 100) / 10;

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'plant-store-sam-'));
  let started = performance.now();
  engine = await startDockerEngine(path.join(repositoryRoot, '.data', 'docker'));
  figures.engineSeconds = since(started);
  image = ensureStandInImage(engine.host, path.join(repositoryRoot, '.data', 'sam'));
  figures.image = `${image.source} in ${image.seconds} s (${Math.round(image.bytes / 2 ** 20)} MiB)`;
  started = performance.now();
  const cdkOut = path.join(work, 'cdk.out');
  // The recipe's synth, into a folder of the test's own.
  await run('npx', ['cdk', 'synth', '-c', 'stage=dev', '--quiet', '--output', cdkOut], {
    cwd: repositoryRoot,
    maxBuffer: 64 * 1024 * 1024,
  });
  figures.synthSeconds = since(started);
  templatePath = path.join(cdkOut, 'PlantStore-dev.template.json');
  template = JSON.parse(readFileSync(templatePath, 'utf8')) as SynthesizedTemplate;
  services = await startSamServices({
    host: engine.gatewayAddress,
    template,
    envVarsFile: path.join(work, 'env-vars.json'),
    keysDirectory: path.join(work, 'keys'),
  });
}, 900_000);

afterAll(async () => {
  console.info(`sam local: ${JSON.stringify(figures)}`);
  await services?.stop();
  await engine?.stop();
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

function started(): { engine: DockerEngine; services: SamServices } {
  if (engine === undefined || services === undefined) throw new Error('the suite did not start');
  return { engine, services };
}

/** The logical id of the function the stack builds under `constructId` (`CreatePlant`). */
function logicalIdOf(constructId: string): string {
  const found = Object.entries(template.Resources).find(
    ([, resource]) =>
      resource.Type === 'AWS::Lambda::Function' &&
      String(resource.Metadata?.['aws:cdk:path']).split('/')[1] === constructId,
  );
  if (found === undefined) throw new Error(`No function ${constructId} in the template`);
  return found[0];
}

/** `sam local invoke` of `constructId` with `eventPath`: its answer, parsed. */
async function samInvoke(constructId: string, eventPath: string): Promise<unknown> {
  const { command, environment } = samCommand({
    ...process.env,
    DOCKER_HOST: started().engine.host,
  });
  const begun = performance.now();
  const { stdout } = await run(
    command,
    [
      'local',
      'invoke',
      '-t',
      templatePath,
      constructId,
      '-e',
      eventPath,
      '--env-vars',
      started().services.envVarsFile,
      '--skip-pull-image',
    ],
    { env: environment, maxBuffer: 16 * 1024 * 1024 },
  );
  figures[`invoke ${constructId} s`] = since(begun);
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? 'null');
}

const eventFile = (name: string) => path.join(repositoryRoot, 'events', `${name}.json`);
const readEvent = (name: string) => JSON.parse(readFileSync(eventFile(name), 'utf8'));
const pascalCase = (name: string) => `${name.charAt(0).toUpperCase()}${name.slice(1)}`;

/**
 * A proxy answer with what changes from run to run taken out: an ETag is a version in
 * microseconds of the clock, so only its form is compared.
 */
function comparable(answer: unknown) {
  const {
    statusCode,
    headers = {},
    body,
  } = answer as {
    statusCode: number;
    headers?: Record<string, string>;
    body: string;
  };
  const { ETag: etag, ...rest } = headers;
  return {
    statusCode,
    headers: rest,
    etag: etag === undefined ? undefined : /^"\d+"$/.test(etag),
    body,
  };
}

describe('sam local invoke', () => {
  it('answers every route function\u2019s sample event as the same event answers in-process, in the order of a plant\u2019s life', async () => {
    const { services: local } = started();
    const documentClient = createDocumentClient({ endpoint: local.dynamoDbEndpoint });
    const inProcessTable = 'plants-in-process';
    await createPlantsTableIfMissing(documentClient, inProcessTable);
    const variables = local.variables[logicalIdOf(pascalCase(routeFunctionNames[0] as string))];
    // create, list, get, update, delete: the route table's order.
    for (const name of routeFunctionNames) {
      const factory = (await import(
        path.join(repositoryRoot, routeFunctionFolder(name), 'create-handler.ts')
      )) as {
        createHandler: (
          dependencies: TableHandlerDependencies,
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
    const inProcess = await createAuthorizer(
      readAuthorizerConfig({ ...variables, AWS_SAM_LOCAL: 'true' }),
      {
        logger: quiet,
      },
    )(event);
    const viaSam = await samInvoke('Authorizer', eventPath);
    expect(viaSam).toEqual(inProcess);
    expect(JSON.stringify(viaSam)).toContain('"Effect":"Allow"');
  }, 120_000);

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
    expect(viaSam).toEqual({ replayedBatches: 0, newPlants: 0, remainingBatches: 0 });
    expect(viaSam).toEqual(inProcess);
  }, 120_000);
});

describe('sam local start-api', () => {
  let api: ChildProcess | undefined;
  let url = '';
  let output = '';
  let requests = 0;

  beforeAll(async () => {
    const { command, environment } = samCommand({
      ...process.env,
      DOCKER_HOST: started().engine.host,
    });
    const port = 3000 + Math.floor(Math.random() * 1000);
    const begun = performance.now();
    api = spawn(
      command,
      [
        'local',
        'start-api',
        '-t',
        templatePath,
        '--env-vars',
        started().services.envVarsFile,
        '--skip-pull-image',
        '--warm-containers',
        'EAGER',
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
      ],
      { env: environment, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const collect = (chunk: Buffer) => {
      output += chunk.toString('utf8');
    };
    api.stdout?.on('data', collect);
    api.stderr?.on('data', collect);
    const deadline = Date.now() + 180_000;
    while (!output.includes('Running on')) {
      if (api.exitCode !== null || Date.now() > deadline) {
        throw new Error(`sam local start-api did not start: ${output.slice(-2000)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    figures.startApiSeconds = since(begun);
    url = `http://127.0.0.1:${port}`;
  }, 240_000);

  afterAll(async () => {
    if (api === undefined || api.exitCode !== null) return;
    const exited = new Promise((resolve) => api?.once('exit', resolve));
    api.kill('SIGINT');
    await exited;
  });

  const call = async (
    method: string,
    requestPath: string,
    token: string | undefined,
    body?: string,
    headers: Record<string, string> = {},
  ) => {
    const begun = performance.now();
    const response = await fetch(`${url}${requestPath}`, {
      method,
      headers: {
        ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }),
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body }),
    });
    requests += 1;
    figures[`start-api ${requests}: ${method} ${requestPath} → ${response.status}, s`] =
      since(begun);
    return response;
  };

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
