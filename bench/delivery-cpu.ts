/**
 * What a webhook delivery costs the delivery function's CPU: `npm run cost` takes a run's figure
 * as `deliverWebhook`, and `npm run capacity` the default it set (bench/cost.ts). Endpoints
 * registered through the local API on DynamoDB Local; a stream batch fanned out to them by the
 * fan-out's own code; its bundles then delivered by the delivery's own handler in this process,
 * ten queue messages an invocation as the deployed mapping hands them: each endpoint read, each
 * delivery claimed, signed, sent and logged. The receiver runs in a process of its own, so only
 * the function's work is counted. `node bench/delivery-cpu.ts` runs it alone.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { createHandler } from '../functions/deliver-webhook/create-handler.ts';
import { routes } from '../functions/shared/http/routes.ts';
import { createDocumentClient } from '../functions/shared/platform/dynamodb.ts';
import { createLogger } from '../functions/shared/platform/logger.ts';
import { sqsDeliveryQueue } from '../functions/shared/webhooks/delivery-queue.ts';
import {
  fixedSubscriptions,
  queuePlantEventDeliveries,
} from '../functions/shared/webhooks/queue-deliveries.ts';
import { withEndpointSubscriptions } from '../functions/webhook-endpoints/endpoint-subscriptions.ts';
import { localUrlPolicy } from '../functions/webhook-endpoints/endpoint-url.ts';
import { localSecretBox } from '../functions/webhook-endpoints/secret-box.ts';
import { eventLogOf } from '../functions/webhook-endpoints/webhook-log.ts';
import { functionSettings } from '../infra/function-settings.ts';
import { fanoutStreamSettings } from '../infra/webhook-pipeline-settings.ts';
import { startDynamoDbLocal } from '../local/dynamodb-local.ts';
import { loadOrCreateEndpointSecretsKey } from '../local/endpoint-secrets-key.ts';
import { startLocalApi } from '../local/local-api.ts';
import { memoryQueues } from '../local/pipeline/memory-queues.ts';
import { percentile, round } from './statistics.ts';

export interface DeliveryCpuFigures {
  readonly endpoints: number;
  /** Deliveries a round: a stream batch's events, each to every endpoint. */
  readonly deliveriesPerRound: number;
  readonly rounds: number;
  /** The function's CPU (user and system) a delivery, µs: each round's, then their median. */
  readonly cpuMicrosecondsPerDelivery: {
    readonly median: number;
    readonly min: number;
    readonly max: number;
  };
  /** The function's memory: Lambda gives it that share of a vCPU (a full one at 1,769 MB). */
  readonly memorySizeMb: number;
  /** Every delivery the receiver got (it must be every one sent). */
  readonly received: number;
}

const registrationScope = (
  routes.find((route) => route.method === 'POST' && route.path === '/webhook-endpoints')?.scopes ??
  []
).join(' ');

/** A receiver answering 204 to every POST, in a process of its own; `GET /count` says how many. */
const receiverSource = `
let count = 0;
require('node:http').createServer((request, response) => {
  request.resume().on('end', () => {
    if (request.method === 'POST') count += 1;
    response.writeHead(request.method === 'POST' ? 204 : 200).end(request.method === 'POST' ? '' : String(count));
  });
}).listen(0, '127.0.0.1', function () { console.log(this.address().port); });
`;

export async function measureDeliveryCpu(options: {
  readonly dynamoDbUrl: string;
  readonly endpoints?: number;
  readonly rounds?: number;
}): Promise<DeliveryCpuFigures> {
  const endpoints = options.endpoints ?? 20;
  const rounds = options.rounds ?? 7;
  const keysDirectory = mkdtempSync(join(tmpdir(), 'plant-store-bench-deliveries-'));
  const receiver = spawn(process.execPath, ['-e', receiverSource], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const queues = memoryQueues();
  const documentClient = createDocumentClient({ url: options.dynamoDbUrl });
  const api = await startLocalApi({
    port: 0,
    dynamoDbUrl: options.dynamoDbUrl,
    tableName: `bench-deliveries-${Date.now()}`,
    keysDirectory,
    logger: createLogger({}, () => {}),
    throttlingStage: 'off',
    webhooks: { endpointUrlPolicy: localUrlPolicy },
  });
  try {
    const receiverUrl = `http://127.0.0.1:${await portOf(receiver)}`;
    for (let index = 0; index < endpoints; index += 1) {
      const response = await fetch(`${api.url}/webhook-endpoints`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${api.signToken({ scope: registrationScope, subject: 'bench' })}`,
          'Content-Type': 'application/json',
        },
        body: JSON.stringify({ url: `${receiverUrl}/hooks/${index}` }),
      });
      if (response.status !== 201) throw new Error(`Registration ${index}: ${response.status}`);
    }
    const logTableName = `${api.tableName}-webhook-log`;
    const stores = {
      documentClient,
      endpointsTableName: `${api.tableName}-webhook-endpoints`,
      logTableName,
    };
    const subscriptions = await withEndpointSubscriptions([], stores).current();
    const deliver = createHandler({
      sqs: refusing as Pick<SQSClient, 'send'>,
      secretsManager: refusing as never,
      retryQueueUrl: 'none',
      deadLetterQueueUrl: 'none',
      subscribers: [],
      endpoints: {
        stores,
        secretBox: localSecretBox(loadOrCreateEndpointSecretsKey(keysDirectory)),
        urlPolicy: localUrlPolicy,
      },
      logger: createLogger({}, () => {}),
    });
    const perDelivery: number[] = [];
    let deliveries = 0;
    // A round more than measured: the first warms the clients, the connections and the JIT.
    for (let run = 0; run <= rounds; run += 1) {
      const bodies = await fannedOut(run, subscriptions, stores, queues);
      const count = bodies.reduce((sum, body) => sum + deliveriesIn(body), 0);
      const cpu = process.cpuUsage();
      for (let first = 0; first < bodies.length; first += 10) {
        const { batchItemFailures } = await deliver(sqsEvent(bodies.slice(first, first + 10)), {
          awsRequestId: `bench-${run}-${first}`,
          getRemainingTimeInMillis: () => functionSettings.deliverWebhook.timeoutSeconds * 1000,
        });
        if (batchItemFailures.length > 0) throw new Error('a delivery failed');
      }
      const used = process.cpuUsage(cpu);
      if (run > 0) perDelivery.push((used.user + used.system) / count);
      deliveries += count;
    }
    const received = Number(await (await fetch(`${receiverUrl}/count`)).text());
    if (received !== deliveries) throw new Error(`${received} of ${deliveries} received`);
    perDelivery.sort((a, b) => a - b);
    return {
      endpoints,
      deliveriesPerRound: endpoints * fanoutStreamSettings.batchSize,
      rounds,
      cpuMicrosecondsPerDelivery: {
        median: round(percentile(perDelivery, 0.5)),
        min: round(perDelivery[0] as number),
        max: round(perDelivery.at(-1) as number),
      },
      memorySizeMb: functionSettings.deliverWebhook.memorySizeMb,
      received,
    };
  } finally {
    await api.stop();
    queues.close();
    documentClient.destroy();
    receiver.kill();
    rmSync(keysDirectory, { recursive: true, force: true });
  }
}

const refusing = {
  send: async () => {
    throw new Error('Every delivery here succeeds: nothing is retried or dead-lettered.');
  },
};

/** A stream batch of new plants, fanned out to every endpoint: the queue bodies it made. */
async function fannedOut(
  round: number,
  subscriptions: Awaited<ReturnType<ReturnType<typeof withEndpointSubscriptions>['current']>>,
  stores: Parameters<typeof eventLogOf>[0],
  queues: ReturnType<typeof memoryQueues>,
): Promise<readonly string[]> {
  const queue = queues.create(`bench-deliveries-${round}`, { visibilityTimeoutSeconds: 180 });
  const records = Array.from({ length: fanoutStreamSettings.batchSize }, (_, index) => {
    const id = BigInt(1_000_000 * (round + 1) + index);
    return {
      eventID: `bench-${round}-${index}`,
      eventName: 'INSERT',
      dynamodb: {
        SequenceNumber: String(index + 1),
        ApproximateCreationDateTime: Math.floor(Date.now() / 1000),
        NewImage: marshall({ id, name: `Plant ${id}`, version: 1 }),
      },
    };
  });
  const outcome = await queuePlantEventDeliveries(
    records,
    {
      deliveries: sqsDeliveryQueue(queues.sqs as Pick<SQSClient, 'send'>, queue.url),
      subscriptions: fixedSubscriptions(subscriptions),
      eventLog: eventLogOf(stores),
    },
    createLogger({}, () => {}),
  );
  if (outcome.failedRecord !== undefined) throw new Error('the fan-out could not queue');
  return queues.bodies(queue.url);
}

function deliveriesIn(body: string): number {
  const { deliveries } = JSON.parse(body) as { deliveries?: unknown[] };
  return deliveries?.length ?? 1;
}

function sqsEvent(bodies: readonly string[]): SQSEvent {
  return {
    Records: bodies.map(
      (body, index) => ({ messageId: String(index), body, messageAttributes: {} }) as SQSRecord,
    ),
  };
}

async function portOf(child: ChildProcess): Promise<number> {
  const [line] = (await once(child.stdout as NodeJS.ReadableStream, 'data')) as [Buffer];
  return Number(line.toString().trim());
}

if (import.meta.main) {
  const store = await startDynamoDbLocal();
  try {
    console.log(JSON.stringify(await measureDeliveryCpu({ dynamoDbUrl: store.url }), null, 2));
  } finally {
    await store.stop();
  }
}
