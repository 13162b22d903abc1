/**
 * Webhook endpoints as a client registers them, on whichever target the suite runs against: a
 * receiver the target's functions can reach gets each new plant signed with the endpoint's
 * secret, verified with the Standard Webhooks library; another client never sees the endpoint;
 * and the endpoint is gone (404) once deleted. Every endpoint points at the suite's receiver:
 * none sends anything beyond this machine.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect } from '@jest/globals';
import { startWebhookReceiver, type WebhookReceiver } from '../../beds/webhook-receiver.ts';
import { expectDocumented, expectError } from './answers.ts';
import { caseNeeding } from './cases.ts';
import { freeIds, OwnPlants } from './own-plants.ts';
import { call, target, tokenFor } from './target.ts';

const manager = await tokenFor('webhooks/manage plants/read plants/write');
const [plantId = 0n] = await freeIds(8_100_000_000_000_000n, 1, manager);
const made = new OwnPlants();
let receiver: WebhookReceiver | undefined;
const endpoints: string[] = [];

beforeAll(async () => {
  receiver = await startWebhookReceiver(
    `whsec_${randomBytes(32).toString('base64')}`,
    0,
    target().receiverHost ?? '127.0.0.1',
  );
}, 180_000);

afterAll(async () => {
  await receiver?.stop();
  if (!target().writes) return;
  for (const id of endpoints) await call('DELETE', `/webhook-endpoints/${id}`, { token: manager });
  await made.removeAll(manager);
}, 180_000);

async function register(url: string, events = ['plant.created']) {
  const answer = await call('POST', '/webhook-endpoints', {
    token: manager,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ url, events, description: 'contract suite' }),
  });
  const body = (await expectDocumented(answer, 'createWebhookEndpoint')) as {
    id: string;
    secret: string;
  };
  endpoints.push(body.id);
  return body;
}

describe('a webhook endpoint', () => {
  caseNeeding('writes', 'webhook-receiver')(
    'gets each new plant signed with its secret, verified with Standard Webhooks, whatever its characters',
    async () => {
      const hooks = receiver as WebhookReceiver;
      const { id, secret } = await register(`${hooks.url}/contract`);
      hooks.setSecret(secret);
      // U+FFFF and U+FFFE: JSON leaves them as they are, and SQS refuses them unescaped.
      const name = 'Hooked\uFFFF\uFFFE';
      const created = await made.create(plantId, { name }, manager);
      expect(created.status).toBe(200);
      // Other files' plants may reach it too: this one is found by its id.
      const ours = () =>
        hooks.deliveries.find((received) => received.body.includes(`"id":${plantId}`));
      const deadline = Date.now() + 60_000;
      while (ours() === undefined && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const delivery = ours();
      expect(delivery?.verified).toBe(true);
      expect(JSON.parse(delivery?.body ?? '{}')).toEqual({
        type: 'plant.created',
        timestamp: expect.any(String),
        data: { id: Number(plantId), name, version: expect.any(Number) },
      });
      // Its attempts show the delivery, once the delivery has written it (after the receiver's
      // answer, so a moment after the receiver has it).
      let listed: unknown[] = [];
      for (const until = Date.now() + 30_000; Date.now() < until; ) {
        const attempts = await call('GET', `/webhook-endpoints/${id}/attempts`, { token: manager });
        listed = (await expectDocumented(attempts, 'listWebhookEndpointAttempts')) as unknown[];
        if (listed.length > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(listed).toEqual(
        expect.arrayContaining([expect.objectContaining({ outcome: 'delivered' })]),
      );
    },
    120_000,
  );

  caseNeeding('writes', 'webhook-receiver')(
    'is managed through every route: listed, read, changed, its secret read and rotated, tested, its attempts listed, recovered',
    async () => {
      // Deletes only: the receiver verifies with the first case's secret, and hears its creates.
      const { id } = await register(`${receiver?.url}/managed`, ['plant.deleted']);
      const listed = await call('GET', '/webhook-endpoints?limit=100', { token: manager });
      expect(await expectDocumented(listed, 'listWebhookEndpoints')).toEqual(
        expect.arrayContaining([expect.objectContaining({ id })]),
      );
      const read = await call('GET', `/webhook-endpoints/${id}`, { token: manager });
      expect(await expectDocumented(read, 'getWebhookEndpoint')).toMatchObject({ id });
      const changed = await call('PATCH', `/webhook-endpoints/${id}`, {
        token: manager,
        headers: { 'Content-Type': 'application/merge-patch+json', 'If-Match': '*' },
        body: JSON.stringify({ description: 'managed by the contract suite' }),
      });
      expect(await expectDocumented(changed, 'updateWebhookEndpoint')).toMatchObject({
        description: 'managed by the contract suite',
      });
      const secret = await call('GET', `/webhook-endpoints/${id}/secret`, { token: manager });
      const { secret: before } = (await expectDocumented(secret, 'getWebhookEndpointSecret')) as {
        secret: string;
      };
      const rotated = await call('POST', `/webhook-endpoints/${id}/secret/rotate`, {
        token: manager,
      });
      const { secret: after } = (await expectDocumented(
        rotated,
        'rotateWebhookEndpointSecret',
      )) as { secret: string };
      expect(after).not.toBe(before);
      const tested = await call('POST', `/webhook-endpoints/${id}/test`, { token: manager });
      await expectDocumented(tested, 'testWebhookEndpoint');
      const attempts = await call('GET', `/webhook-endpoints/${id}/attempts`, { token: manager });
      await expectDocumented(attempts, 'listWebhookEndpointAttempts');
      const since = new Date(Date.now() - 60_000).toISOString();
      const recovered = await call('POST', `/webhook-endpoints/${id}/recover`, {
        token: manager,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ since }),
      });
      expect(await expectDocumented(recovered, 'recoverWebhookEndpoint')).toMatchObject({
        events: expect.any(Number),
      });
    },
    120_000,
  );

  caseNeeding('writes', 'webhook-receiver')(
    'answers a retry with its Idempotency-Key as it first did: a create, a rotation, a test and a recover, each done once',
    async () => {
      const keyed = (operationId: string, method: string, path: string, body?: unknown) => {
        const key = randomUUID();
        return async () => {
          const answer = await call(method, path, {
            token: manager,
            headers: {
              'Idempotency-Key': key,
              ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
            },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          });
          return { body: await expectDocumented(answer, operationId), answer };
        };
      };
      const replayed = (answer: { headers: Record<string, string | undefined> }) =>
        answer.headers['idempotent-replayed'];
      const create = keyed('createWebhookEndpoint', 'POST', '/webhook-endpoints', {
        url: `${receiver?.url}/keyed`,
        events: ['plant.deleted'],
      });
      const created = await create();
      const createdAgain = await create();
      const { id } = created.body as { id: string };
      endpoints.push(id);
      expect([createdAgain.body, replayed(createdAgain.answer)]).toEqual([created.body, 'true']);
      const listed = await call('GET', '/webhook-endpoints?limit=100', { token: manager });
      const keyedOnes = (
        (await expectDocumented(listed, 'listWebhookEndpoints')) as {
          url: string;
        }[]
      ).filter((endpoint) => endpoint.url === `${receiver?.url}/keyed`);
      expect(keyedOnes).toHaveLength(1);

      const path = `/webhook-endpoints/${id}`;
      const since = new Date(Date.now() - 60_000).toISOString();
      const firsts: unknown[] = [];
      for (const again of [
        keyed('rotateWebhookEndpointSecret', 'POST', `${path}/secret/rotate`),
        keyed('testWebhookEndpoint', 'POST', `${path}/test`),
        keyed('recoverWebhookEndpoint', 'POST', `${path}/recover`, { since }),
      ]) {
        const first = await again();
        const retry = await again();
        expect([retry.body, replayed(retry.answer)]).toEqual([first.body, 'true']);
        firsts.push(first.body);
      }
      // Rotated once: the secret the rotation answered (twice) is the endpoint's.
      const current = await call('GET', `${path}/secret`, { token: manager });
      expect(await expectDocumented(current, 'getWebhookEndpointSecret')).toEqual(firsts[0]);

      // A failure keeps nothing: the key's retry runs again once the endpoint is enabled.
      const enable = (enabled: boolean) =>
        call('PATCH', path, {
          token: manager,
          headers: { 'Content-Type': 'application/merge-patch+json', 'If-Match': '*' },
          body: JSON.stringify({ enabled }),
        });
      const recover = keyed('recoverWebhookEndpoint', 'POST', `${path}/recover`, { since });
      await enable(false);
      await expect(recover()).resolves.toMatchObject({ answer: { status: 409 } });
      await enable(true);
      const recovered = await recover();
      expect([recovered.answer.status, replayed(recovered.answer)]).toEqual([202, undefined]);
    },
    120_000,
  );

  caseNeeding('writes', 'webhook-receiver', 'second-client')(
    'is its owner’s alone: another client gets 404/40402 and an empty list',
    async () => {
      const { id } = await register(`${receiver?.url}/owned`);
      const other = await tokenFor('webhooks/manage plants/read', 'another-contract-client');
      await expectError(
        await call('GET', `/webhook-endpoints/${id}`, { token: other }),
        'getWebhookEndpoint',
        404,
        40402,
      );
      const listed = await call('GET', '/webhook-endpoints', { token: other });
      expect(await expectDocumented(listed, 'listWebhookEndpoints')).toEqual([]);
    },
    60_000,
  );

  caseNeeding('writes', 'webhook-receiver')(
    'is gone once deleted: 204, then 404/40402',
    async () => {
      const { id } = await register(`${receiver?.url}/deleted`);
      const deleted = await call('DELETE', `/webhook-endpoints/${id}`, { token: manager });
      expect([deleted.status, deleted.text]).toEqual([204, '']);
      await expectError(
        await call('GET', `/webhook-endpoints/${id}`, { token: manager }),
        'getWebhookEndpoint',
        404,
        40402,
      );
    },
    60_000,
  );
});
