/**
 * Webhook endpoints on the deployed path, held to AWS's rules on emulators: created with the
 * secret sealed by moto's KMS, fanned out from DynamoDB Local's stream, queued in moto's SQS,
 * delivered, retried and dead-lettered on a compressed schedule, to receivers on 127.0.0.1 that
 * verify every signature with the Standard Webhooks library.
 *
 * @services dynamodb-local
 */
import { randomBytes } from 'node:crypto';
import {
  GetQueueAttributesCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { type DeployedWebhooks, startDeployedWebhooks } from '../../beds/deployed-webhooks.ts';
import { type MotoServer, startMotoServer } from '../../beds/moto-server.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../beds/webhook-receiver.ts';
import { createHandler as createEndpoint } from '../../functions/create-webhook-endpoint/create-handler.ts';
import { createHandler as deleteEndpoint } from '../../functions/delete-webhook-endpoint/create-handler.ts';
import { createLogger } from '../../functions/shared/platform/logger.ts';
import {
  deliveryMessageBody,
  deliveryMessagesBody,
  firstDeliveryMessage,
} from '../../functions/shared/webhooks/delivery-message.ts';
import { endpointSubscriberName } from '../../functions/webhook-endpoints/endpoint-subscriptions.ts';
import { deployedUrlPolicy } from '../../functions/webhook-endpoints/endpoint-url.ts';
import { listAttempts } from '../../functions/webhook-endpoints/webhook-log.ts';
import { createEndpointEvent, createLambdaContext } from '../support/api-gateway-event.ts';
import { testStoreUrl } from '../support/test-store.ts';

/** The deployed policy, but for this machine's loopback, where the receivers are. */
const bedPolicy = { ...deployedUrlPolicy, httpsOnly: false, allowLoopback: true };

let moto: MotoServer;
const running: { stop(): Promise<void> }[] = [];

beforeAll(async () => {
  moto = await startMotoServer();
}, 180_000);

afterEach(async () => {
  for (const entry of running.splice(0).reverse()) await entry.stop();
});

afterAll(async () => {
  await moto?.stop();
});

async function startBed(): Promise<DeployedWebhooks> {
  const bed = await startDeployedWebhooks({
    moto,
    dynamoDbUrl: testStoreUrl(),
    subscribers: [],
    retrySchedule: [1, 1],
    maximumDelaySeconds: 1,
    visibilityTimeoutSeconds: 5,
    endpoints: { urlPolicy: bedPolicy },
  });
  running.push(bed);
  return bed;
}

async function receiver(): Promise<WebhookReceiver> {
  const started = await startWebhookReceiver(`whsec_${randomBytes(32).toString('base64')}`);
  running.push(started);
  return started;
}

/** The create function as deployed, on the bed's stores, for `client`. */
async function register(bed: DeployedWebhooks, client: string, url: string) {
  const stores = bed.endpoints;
  if (stores === undefined) throw new Error('the bed has no endpoint stores');
  const create = createEndpoint({
    documentClient: bed.table.documentClient,
    endpointsTableName: stores.stores.endpointsTableName,
    logTableName: stores.stores.logTableName,
    secretBox: stores.secretBox,
    urlPolicy: bedPolicy,
    logger: createLogger({}, () => {}),
  });
  const answer = (await create(
    createEndpointEvent(
      { method: 'POST', path: '/webhook-endpoints' },
      { body: JSON.stringify({ url }), client },
    ),
    createLambdaContext(),
  )) as APIGatewayProxyResult;
  expect(answer.statusCode).toBe(201);
  return JSON.parse(answer.body) as { id: string; secret: string };
}

/** Messages on the bed's delivery and retry queues: waiting, delayed or in flight. */
async function messagesLeft(bed: DeployedWebhooks): Promise<number> {
  let total = 0;
  for (const QueueUrl of [bed.deliveryQueueUrl, bed.retryQueueUrl]) {
    const { Attributes = {} } = await moto.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['All'] }),
    );
    const { ApproximateNumberOfMessages: waiting, ApproximateNumberOfMessagesDelayed: delayed } =
      Attributes;
    const inFlight = Attributes.ApproximateNumberOfMessagesNotVisible;
    total += Number(waiting ?? 0) + Number(delayed ?? 0) + Number(inFlight ?? 0);
  }
  return total;
}

function putPlant(bed: DeployedWebhooks, id: bigint, name: string) {
  return bed.table.documentClient.send(
    new PutCommand({ TableName: bed.table.tableName, Item: { id, name, version: 1n } }),
  );
}

describe('webhook endpoints on the deployed path', () => {
  it('delivers to a registered endpoint, signed with its KMS-sealed secret, and logs the attempt', async () => {
    const bed = await startBed();
    const hooks = await receiver();
    const { id, secret } = await register(bed, 'client-a', hooks.url);
    // Stored sealed by the KMS key, bound to the endpoint: never as it is.
    const { Item } = await bed.table.documentClient.send(
      new GetCommand({
        TableName: bed.endpoints?.stores.endpointsTableName,
        Key: { owner: 'client-a', endpointId: id },
      }),
    );
    expect(JSON.stringify(Item)).not.toContain(secret.slice(6));
    // Sealed under the stage's data key, which KMS sealed (secret-box.ts).
    expect(Item?.secret).toMatch(/^dk1:/);
    hooks.setSecret(secret);
    await putPlant(bed, 7n, 'Ivy');
    await hooks.waitForAccepted(1);
    expect(hooks.deliveries[0]).toMatchObject({ verified: true });
    expect(JSON.parse(hooks.deliveries[0]?.body ?? '')).toMatchObject({
      type: 'plant.created',
      data: { id: 7, name: 'Ivy' },
    });
    let attempts: readonly { outcome: string }[] = [];
    const deadline = Date.now() + 10_000;
    while (attempts.length === 0 && Date.now() < deadline) {
      ({ attempts } = await listAttempts(id, { limit: 10 }, bed.endpoints?.stores as never));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(attempts).toEqual([expect.objectContaining({ outcome: 'delivered', attempt: 1 })]);
  }, 180_000);

  it('retries a failing endpoint through the retry queue and dead-letters it, while another gets every event', async () => {
    const bed = await startBed();
    const failing = await receiver();
    const healthy = await receiver();
    failing.setMode('fail');
    failing.setSecret((await register(bed, 'client-a', failing.url)).secret);
    healthy.setSecret((await register(bed, 'client-b', healthy.url)).secret);
    for (const [id, name] of [
      [1n, 'Fern'],
      [2n, 'Moss'],
    ] as const)
      await putPlant(bed, id, name);
    await healthy.waitForAccepted(2);
    let letters: Record<string, unknown>[] = [];
    const deadline = Date.now() + 40_000;
    while (letters.length < 2 && Date.now() < deadline) {
      letters = await bed.deadLetters();
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(letters).toHaveLength(2);
    for (const letter of letters) {
      expect(letter).toMatchObject({ attempts: 3, lastFailure: 'answered HTTP 500' });
      expect(String(letter.subscriber)).toMatch(/^endpoint:ep_/);
    }
    // Three attempts each, every one signed with the endpoint's own secret.
    expect(failing.deliveries).toHaveLength(6);
    expect(failing.deliveries.every((delivery) => delivery.verified)).toBe(true);
  }, 180_000);

  it('sends nothing more to an endpoint deleted while its retry waits', async () => {
    const bed = await startBed();
    const hooks = await receiver();
    const { id, secret } = await register(bed, 'client-a', hooks.url);
    hooks.setSecret(secret);
    hooks.setMode('fail');
    await putPlant(bed, 3n, 'Oak');
    const deadline = Date.now() + 20_000;
    while (hooks.deliveries.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const stores = bed.endpoints;
    const remove = deleteEndpoint({
      documentClient: bed.table.documentClient,
      endpointsTableName: stores?.stores.endpointsTableName ?? '',
      logTableName: stores?.stores.logTableName ?? '',
      logger: createLogger({}, () => {}),
    });
    const answer = (await remove(
      createEndpointEvent(
        { method: 'DELETE', path: '/webhook-endpoints/{endpointId}' },
        { endpointId: id, client: 'client-a' },
      ),
      createLambdaContext(),
    )) as APIGatewayProxyResult;
    expect(answer.statusCode).toBe(204);
    hooks.setMode('ok');
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect(hooks.deliveries).toHaveLength(1);
    expect(await bed.deadLetters()).toEqual([]);
  }, 180_000);

  it('reads an endpoint once for a bundle of its deliveries, and sends each', async () => {
    const bed = await startBed();
    const hooks = await receiver();
    const { id, secret } = await register(bed, 'client-a', hooks.url);
    hooks.setSecret(secret);
    const endpointsTable = bed.endpoints?.stores.endpointsTableName;
    const endpointReads: unknown[] = [];
    bed.table.documentClient.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { TableName?: string };
        if (context.commandName === 'GetItemCommand' && input.TableName === endpointsTable) {
          endpointReads.push(input);
        }
        return next(args);
      },
      { step: 'initialize', name: 'countEndpointReads' },
    );
    const address = { id, owner: 'client-a', type: 'plant.created' };
    const bundle = Array.from({ length: 10 }, (_, index) =>
      firstDeliveryMessage(
        { webhookId: `msg_bundled-${index}`, payload: `{"id":${index}}` },
        endpointSubscriberName(id),
        Date.now(),
        address,
      ),
    );
    await moto.sqs.send(
      new SendMessageCommand({
        QueueUrl: bed.deliveryQueueUrl,
        MessageBody: deliveryMessagesBody(bundle),
      }),
    );
    await hooks.waitForAccepted(10);
    expect(new Set(hooks.deliveries.map((delivery) => delivery.webhookId)).size).toBe(10);
    expect(endpointReads).toHaveLength(1);
  }, 120_000);

  it('sends a delivery SQS hands out twice once, the copies side by side in one batch', async () => {
    // Standard queues deliver at least once: a copy of a message may come with it (SQS
    // Developer Guide, "At-least-once delivery"). Twenty deliveries, each queued twice at once.
    const bed = await startBed();
    const hooks = await receiver();
    const { id, secret } = await register(bed, 'client-a', hooks.url);
    hooks.setSecret(secret);
    const address = { id, owner: 'client-a', type: 'plant.created' };
    const bodies = Array.from({ length: 20 }, (_, index) => {
      const webhook = { webhookId: `msg_copy-${index}`, payload: `{"id":${index}}` };
      const message = firstDeliveryMessage(
        webhook,
        endpointSubscriberName(id),
        Date.now(),
        address,
      );
      return deliveryMessageBody(message);
    });
    for (let start = 0; start < bodies.length; start += 5) {
      const copies = bodies.slice(start, start + 5).flatMap((body) => [body, body]);
      await moto.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: bed.deliveryQueueUrl,
          Entries: copies.map((MessageBody, index) => ({ Id: String(index), MessageBody })),
        }),
      );
    }
    await hooks.waitForAccepted(20);
    // Each copy waits out its twin's attempt (30 s), then finds the event delivered: the queues
    // empty, nothing was sent again.
    const deadline = Date.now() + 120_000;
    while ((await messagesLeft(bed)) > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(await messagesLeft(bed)).toBe(0);
    const answered = hooks.deliveries.filter((delivery) => delivery.answered === 'ok');
    expect(answered.map((delivery) => delivery.webhookId).sort()).toEqual(
      bodies.map((_, index) => `msg_copy-${index}`).sort(),
    );
  }, 180_000);
});
