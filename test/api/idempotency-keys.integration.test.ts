/**
 * `Idempotency-Key` on the endpoint POSTs that are not idempotent (create, test, recover, rotate):
 * a retry answers what the first request did and changes nothing again, through the local API;
 * and a create whose write landed but whose answer was a 503 (the store's answer lost on the way
 * back) makes no second endpoint on its retry, driven in-process on the real store.
 *
 * @services dynamodb-local
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHandler } from '../../functions/create-webhook-endpoint/create-handler.ts';
import { createDocumentClient } from '../../functions/shared/platform/dynamodb.ts';
import { localUrlPolicy } from '../../functions/webhook-endpoints/endpoint-url.ts';
import { localSecretBox } from '../../functions/webhook-endpoints/secret-box.ts';
import { createEndpointEvent, createLambdaContext } from '../support/api-gateway-event.ts';
import { testStoreUrl } from '../support/test-store.ts';
import { type EndpointBed, eventually, startEndpointBed } from './endpoint-bed.ts';

let bed: EndpointBed;
beforeAll(async () => {
  bed = await startEndpointBed();
}, 120_000);
afterAll(async () => {
  await bed?.stop();
}, 60_000);

const keyed = (key: string) => ({ 'Idempotency-Key': key });

async function endpointsOf(client: string): Promise<string[]> {
  const answer = await bed.request(client, 'GET', '/webhook-endpoints?limit=100');
  return answer.body.map((endpoint: { id: string }) => endpoint.id);
}

describe('a create with an Idempotency-Key', () => {
  it('answers its retry with the same endpoint, secret and Location, replayed, and makes one', async () => {
    const hooks = await bed.receiver();
    const key = randomUUID();
    const body = { url: hooks.url, description: 'keyed' };
    const first = await bed.request('keyed-a', 'POST', '/webhook-endpoints', body, keyed(key));
    const retry = await bed.request('keyed-a', 'POST', '/webhook-endpoints', body, keyed(key));
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect({ status: retry.status, body: retry.body }).toEqual({ status: 201, body: first.body });
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.headers.get('location')).toBe(first.headers.get('location'));
    expect(await endpointsOf('keyed-a')).toEqual([first.body.id]);
    // The key is the client's: another client's request with it is its own.
    const other = await bed.request('keyed-b', 'POST', '/webhook-endpoints', body, keyed(key));
    expect(other.status).toBe(201);
    expect(other.body.id).not.toBe(first.body.id);
    expect(other.headers.get('idempotent-replayed')).toBeNull();
  });

  it('makes one endpoint of 20 creates sent at once with one key, and answers each with it', async () => {
    const hooks = await bed.receiver();
    const key = randomUUID();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        bed.request('keyed-race', 'POST', '/webhook-endpoints', { url: hooks.url }, keyed(key)),
      ),
    );
    const made = await endpointsOf('keyed-race');
    expect(made).toHaveLength(1);
    expect(answers.map((answer) => [answer.status, answer.body.id])).toEqual(
      answers.map(() => [201, made[0]]),
    );
    const secrets = new Set(answers.map((answer) => answer.body.secret));
    expect(secrets.size).toBe(1);
  });

  it('refuses the key with another body 422/42200 and a malformed key 400/40030, making nothing', async () => {
    const hooks = await bed.receiver();
    const key = randomUUID();
    await bed.request('keyed-c', 'POST', '/webhook-endpoints', { url: hooks.url }, keyed(key));
    const reused = await bed.request(
      'keyed-c',
      'POST',
      '/webhook-endpoints',
      { url: hooks.url, description: 'another' },
      keyed(key),
    );
    expect([reused.status, reused.body.error]).toEqual([422, 42200]);
    for (const malformed of ['x'.repeat(256), 'two words', '""']) {
      const answer = await bed.request(
        'keyed-c',
        'POST',
        '/webhook-endpoints',
        { url: hooks.url },
        keyed(malformed),
      );
      expect([malformed.length, answer.status, answer.body.error]).toEqual([
        malformed.length,
        400,
        40030,
      ]);
    }
    // A quoted key (the IETF draft's form) is the same key as the bare one.
    const quoted = await bed.request(
      'keyed-c',
      'POST',
      '/webhook-endpoints',
      { url: hooks.url },
      keyed(`"${key}"`),
    );
    expect([quoted.status, quoted.headers.get('idempotent-replayed')]).toEqual([201, 'true']);
    expect(await endpointsOf('keyed-c')).toHaveLength(1);
  });
});

describe('a test, a recover and a rotation with an Idempotency-Key', () => {
  it('answer their retries as they first did, and do their work once', async () => {
    const hooks = await bed.receiver();
    const { id, secret } = await bed.register('keyed-d', hooks);
    const path = `/webhook-endpoints/${id}`;

    const testKey = randomUUID();
    const test = await bed.request('keyed-d', 'POST', `${path}/test`, undefined, keyed(testKey));
    const testAgain = await bed.request(
      'keyed-d',
      'POST',
      `${path}/test`,
      undefined,
      keyed(testKey),
    );
    expect([test.status, testAgain.status]).toEqual([202, 202]);
    expect(testAgain.body).toEqual(test.body);
    expect(testAgain.headers.get('idempotent-replayed')).toBe('true');

    const since = new Date(Date.now() - 60_000).toISOString();
    const recoverKey = randomUUID();
    const recovered = await bed.request(
      'keyed-d',
      'POST',
      `${path}/recover`,
      { since },
      keyed(recoverKey),
    );
    const recoveredAgain = await bed.request(
      'keyed-d',
      'POST',
      `${path}/recover`,
      { since },
      keyed(recoverKey),
    );
    expect([recovered.status, recoveredAgain.status]).toEqual([202, 202]);
    expect(recoveredAgain.body).toEqual(recovered.body);
    expect(recoveredAgain.headers.get('idempotent-replayed')).toBe('true');

    const rotateKey = randomUUID();
    const rotated = await bed.request(
      'keyed-d',
      'POST',
      `${path}/secret/rotate`,
      { overlapSeconds: 0 },
      keyed(rotateKey),
    );
    const rotatedAgain = await bed.request(
      'keyed-d',
      'POST',
      `${path}/secret/rotate`,
      { overlapSeconds: 0 },
      keyed(rotateKey),
    );
    expect([rotated.status, rotatedAgain.status]).toEqual([200, 200]);
    expect(rotated.body.secret).not.toBe(secret);
    expect(rotatedAgain.body).toEqual(rotated.body);
    // Rotated once: the secret the first answer gave is the endpoint's.
    const current = await bed.request('keyed-d', 'GET', `${path}/secret`);
    expect(current.body.secret).toBe(rotated.body.secret);

    // One test event was queued: the receiver gets it once.
    const tests = () =>
      hooks.deliveries.filter((delivery) => delivery.webhookId.startsWith('msg_test_'));
    await eventually(() => tests().length > 0);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(tests().map((delivery) => delivery.webhookId)).toEqual([test.body.eventId]);
  }, 30_000);

  it('lets a key go after a failure, so that its retry runs again', async () => {
    const hooks = await bed.receiver();
    const { id } = await bed.register('keyed-e', hooks);
    const path = `/webhook-endpoints/${id}`;
    const key = randomUUID();
    const disable = (enabled: boolean) =>
      bed.request('keyed-e', 'PATCH', path, JSON.stringify({ enabled }), {
        'Content-Type': 'application/merge-patch+json',
        'If-Match': '*',
      });
    await disable(false);
    const since = new Date(Date.now() - 60_000).toISOString();
    const refused = await bed.request('keyed-e', 'POST', `${path}/recover`, { since }, keyed(key));
    expect([refused.status, refused.body.error]).toEqual([409, 40900]);
    await disable(true);
    const retried = await bed.request('keyed-e', 'POST', `${path}/recover`, { since }, keyed(key));
    expect([retried.status, retried.headers.get('idempotent-replayed')]).toEqual([202, null]);
  });
});

describe('a create whose write landed and whose answer was lost', () => {
  it('answers 503, and its retry with the key answers the endpoint it made, making no second', async () => {
    const real = createDocumentClient({ url: testStoreUrl() });
    let loseNextTransactionAnswer = true;
    // The store's answer to the transaction is lost on the way back: the write landed, the
    // function hears a timeout, as with a store slower than the call's deadline.
    const documentClient = new Proxy(real, {
      get(target, property, receiver) {
        if (property !== 'send') return Reflect.get(target, property, receiver);
        return async (command: unknown, options?: unknown) => {
          const output = await target.send(command as never, options as never);
          if (command instanceof TransactWriteCommand && loseNextTransactionAnswer) {
            loseNextTransactionAnswer = false;
            throw Object.assign(new Error('Request timed out'), { name: 'TimeoutError' });
          }
          return output;
        };
      },
    });
    const handler = createHandler({
      documentClient,
      endpointsTableName: `${bed.api.tableName}-webhook-endpoints`,
      logTableName: `${bed.api.tableName}-webhook-log`,
      secretBox: localSecretBox(randomBytes(32)),
      urlPolicy: { ...localUrlPolicy, resolve: async () => ['127.0.0.1'] },
    });
    const key = randomUUID();
    const event = createEndpointEvent(
      { method: 'POST', path: '/webhook-endpoints' },
      {
        client: 'keyed-lost',
        body: JSON.stringify({ url: 'http://localhost:9/hooks' }),
        headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key },
      },
    );
    try {
      const lost = await handler(event, createLambdaContext());
      expect([lost.statusCode, JSON.parse(lost.body).error]).toEqual([503, 50300]);
      // The fault landed: the endpoint exists, though the client heard 503.
      expect(await endpointsOf('keyed-lost')).toHaveLength(1);
      const retry = await handler(event, createLambdaContext());
      expect(retry.statusCode).toBe(201);
      expect(retry.headers?.['Idempotent-Replayed']).toBe('true');
      expect(await endpointsOf('keyed-lost')).toEqual([JSON.parse(retry.body).id]);
      // Without the key, the same retry makes a second endpoint: what the key is for.
      const { 'Idempotency-Key': _, ...unkeyed } = event.headers;
      const second = await handler({ ...event, headers: unkeyed }, createLambdaContext());
      expect(second.statusCode).toBe(201);
      expect(await endpointsOf('keyed-lost')).toHaveLength(2);
    } finally {
      real.destroy();
    }
  });
});
