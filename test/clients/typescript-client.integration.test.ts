/**
 * `@plant-store/client` against the local API (gateway stand-in, authorizer, the functions,
 * DynamoDB Local), and held to `openapi.yaml`.
 *
 * @services dynamodb-local
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { build } from 'esbuild';
import { Webhook } from 'standardwebhooks';
import {
  generateSchemaTypes,
  schemaTypesPath,
} from '../../clients/typescript/scripts/schema-types.ts';
import {
  PlantStoreClient,
  PlantStoreError,
  PlantStoreWebhooks,
  parseExactJson,
  stringifyExactJson,
} from '../../clients/typescript/src/index.ts';
import { createLogger } from '../../functions/shared/platform/logger.ts';
import { type LocalApi, startLocalApi } from '../../local/local-api.ts';
import { openApiDocument, operations } from '../api/openapi.ts';
import { testStoreUrl } from '../support/test-store.ts';

let keysDirectory: string;
let api: LocalApi;
let client: PlantStoreClient;

beforeAll(async () => {
  keysDirectory = await mkdtemp(join(tmpdir(), 'plant-store-client-keys-'));
  api = await startLocalApi({
    port: 0,
    dynamoDbUrl: testStoreUrl(),
    tableName: `plants-client-${process.pid}-${Date.now()}`,
    keysDirectory,
    throttlingStage: 'off',
    logger: createLogger({}, () => {}),
  });
  client = new PlantStoreClient({ baseUrl: api.url, token: api.signToken() });
});

afterAll(async () => {
  await api?.stop();
  await rm(keysDirectory, { recursive: true, force: true });
});

describe('the client', () => {
  it('creates, reads, changes and deletes with exact 19-digit ids, sending the ETag it last saw', async () => {
    const id = 9_223_372_036_854_775_807n;
    expect(await client.create({ id, name: 'Fern', tag: 'shade' })).toEqual({
      name: 'Fern',
      tag: 'shade',
    });
    const created = client.etagOf(id);
    expect(created).toMatch(/^"[0-9]+"$/);
    expect(await client.get(id)).toEqual({ id, name: 'Fern', tag: 'shade' });
    expect(await client.update(id, { name: 'Moss' })).toEqual({ id, name: 'Moss' });
    expect(client.etagOf(id)).not.toBe(created);
    expect(await client.patch(id, { tag: 'damp' })).toEqual({ id, name: 'Moss', tag: 'damp' });
    expect(await client.patch(id, { tag: null })).toEqual({ id, name: 'Moss' });
    await client.delete(id);
    await expect(client.get(id)).rejects.toMatchObject({ status: 404, error: 40401 });
  });

  it('throws PlantStoreError with the status, code, message and request id; 412 when another client changed the plant first', async () => {
    const id = -9_223_372_036_854_775_808n;
    await client.create({ id, name: 'Ivy' });
    const other = new PlantStoreClient({ baseUrl: api.url, token: api.signToken() });
    await other.update(id, { name: 'Ivy, by the other client' });
    const error = await client.update(id, { name: 'Ivy, mine' }).catch((caught) => caught);
    expect(error).toBeInstanceOf(PlantStoreError);
    expect(error).toMatchObject({
      status: 412,
      error: 41200,
      message: 'The plant has changed since the ETag in If-Match; read it again.',
    });
    expect((error as PlantStoreError).requestId).toMatch(/^[0-9a-f-]{36}$/);
    // Read again, then change: now it is the version this client saw.
    await client.get(id);
    expect(await client.update(id, { name: 'Ivy, mine' })).toEqual({ id, name: 'Ivy, mine' });
    const readOnly = new PlantStoreClient({
      baseUrl: api.url,
      token: api.signToken({ scope: 'plants/read' }),
    });
    await expect(readOnly.delete(id)).rejects.toMatchObject({ status: 403, error: 40300 });
    // A delete only if unchanged: refused while another client's change is unseen.
    await other.get(id);
    await other.update(id, { name: 'Ivy, changed again' });
    await expect(client.delete(id, { ifUnchanged: true })).rejects.toMatchObject({
      status: 412,
      error: 41200,
    });
    expect(await client.get(id)).toEqual({ id, name: 'Ivy, changed again' });
    await client.delete(id, { ifUnchanged: true });
    await expect(client.get(id)).rejects.toMatchObject({ status: 404 });
    // Gone, and never seen by a new client: deleting it is still a success.
    const fresh = new PlantStoreClient({ baseUrl: api.url, token: api.signToken() });
    await expect(fresh.delete(id, { ifUnchanged: true })).resolves.toBeUndefined();
  });

  it('lists every plant once, following Link across pages', async () => {
    const ids = Array.from({ length: 45 }, (_, index) => 2n ** 62n + BigInt(index));
    await Promise.all(ids.map((id) => client.create({ id, name: `Plant ${id}` })));
    const listed: bigint[] = [];
    for await (const plant of client.list({ limit: 7 })) listed.push(plant.id);
    for (const id of ids) expect(listed.filter((seen) => seen === id)).toHaveLength(1);
  });

  it('retries 429 and 503 no sooner than Retry-After, and gives up after its retries', async () => {
    const answers = [
      new Response('{"error":42900,"message":"Too many requests; retry later."}', {
        status: 429,
        headers: { 'Retry-After': '0' },
      }),
      new Response('{"error":50300,"message":"later"}', {
        status: 503,
        headers: { 'Retry-After': '0.05' },
      }),
      new Response('{"id":12345678901234567890,"name":"Fern"}', {
        status: 200,
        headers: { ETag: '"7"' },
      }),
    ];
    const sentAt: number[] = [];
    const flaky = new PlantStoreClient({
      baseUrl: 'http://plants.invalid',
      token: () => 'token',
      fetch: async () => {
        sentAt.push(performance.now());
        return answers.shift() as Response;
      },
    });
    // The id in the answer is past int64 on purpose: the client reads it exactly, whatever it is.
    expect(await flaky.get(1n)).toEqual({ id: 12345678901234567890n, name: 'Fern' });
    expect(sentAt).toHaveLength(3);
    expect((sentAt[2] as number) - (sentAt[1] as number)).toBeGreaterThanOrEqual(49);
    const failing = new PlantStoreClient({
      baseUrl: 'http://plants.invalid',
      token: 'token',
      maxRetries: 2,
      fetch: async () =>
        new Response('{"error":50300,"message":"down"}', {
          status: 503,
          headers: { 'Retry-After': '0' },
        }),
    });
    await expect(failing.get(1n)).rejects.toMatchObject({ status: 503, error: 50300 });
    // Asked to wait longer than it may: thrown at once, never retried sooner.
    let calls = 0;
    const patient = new PlantStoreClient({
      baseUrl: 'http://plants.invalid',
      token: 'token',
      maxRetryDelayMilliseconds: 1_000,
      fetch: async () => {
        calls += 1;
        return new Response('{"error":42900,"message":"later"}', {
          status: 429,
          headers: { 'Retry-After': '30' },
        });
      },
    });
    await expect(patient.get(1n)).rejects.toMatchObject({ status: 429, error: 42900 });
    expect(calls).toBe(1);
  });

  it('takes a 412 after a retried 503 as its own change when the plant is what it asked for', async () => {
    const answers = [
      new Response('{"id":5,"name":"Fern"}', { status: 200, headers: { ETag: '"1"' } }),
      // The change was made, but its answer was lost in a 503; the retry then meets version 2.
      new Response('{"error":50300,"message":"later"}', {
        status: 503,
        headers: { 'Retry-After': '0' },
      }),
      new Response('{"error":41200,"message":"changed"}', { status: 412 }),
      new Response('{"id":5,"name":"Moss"}', { status: 200, headers: { ETag: '"2"' } }),
    ];
    const client503 = new PlantStoreClient({
      baseUrl: 'http://plants.invalid',
      token: 'token',
      fetch: async () => answers.shift() as Response,
    });
    expect(await client503.update(5n, { name: 'Moss' })).toEqual({ id: 5n, name: 'Moss' });
    expect(client503.etagOf(5n)).toBe('"2"');
  });

  it('throws PlantStoreError for an API it cannot reach, status 0', async () => {
    const unreachable = new PlantStoreClient({ baseUrl: 'http://127.0.0.1:9', token: 'token' });
    await expect(unreachable.get(1n)).rejects.toMatchObject({
      name: 'PlantStoreError',
      status: 0,
      error: 0,
    });
  });

  it('is usable as the plain JavaScript its package ships (npm run build), in Node.js', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'plant-store-client-dist-'));
    try {
      const outfile = join(directory, 'index.js');
      await build({
        entryPoints: ['clients/typescript/src/index.ts'],
        bundle: true,
        format: 'esm',
        platform: 'neutral',
        mainFields: ['module', 'main'],
        target: 'es2022',
        outfile,
        logLevel: 'silent',
      });
      const built = (await import(
        outfile
      )) as typeof import('../../clients/typescript/src/index.ts');
      const plain = new built.PlantStoreClient({ baseUrl: api.url, token: api.signToken() });
      await plain.create({ id: 4_611_686_018_427_000_001n, name: 'Built' });
      expect(await plain.get(4_611_686_018_427_000_001n)).toEqual({
        id: 4_611_686_018_427_000_001n,
        name: 'Built',
      });
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});

describe('exact JSON', () => {
  it('reads every id member as a bigint and nothing else, strings untouched', () => {
    const text =
      '{"id":9223372036854775807,"name":"\\"id\\":1 and \\\\","data":{"id":-1,"version":1795000000000},"ids":[{"id" : 0}]}';
    expect(parseExactJson(text)).toEqual({
      id: 9_223_372_036_854_775_807n,
      name: '"id":1 and \\',
      data: { id: -1n, version: 1_795_000_000_000 },
      ids: [{ id: 0n }],
    });
    expect(stringifyExactJson({ id: -(2n ** 63n), name: 'x' })).toBe(
      '{"id":-9223372036854775808,"name":"x"}',
    );
  });
});

describe('the webhook verifier', () => {
  const secret = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
  const signer = new Webhook(secret);
  const sign = (body: string, webhookId: string, versionHeader?: string) => {
    const now = new Date();
    return {
      'webhook-id': webhookId,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': signer.sign(webhookId, now, body),
      ...(versionHeader === undefined ? {} : { 'plant-version': versionHeader }),
    };
  };
  const verifier = new PlantStoreWebhooks(secret);
  const plantBody = '{"id":9223372036854775807,"name":"Fern"}';

  it('verifies the signature and reads either format with exact ids, the version from the signed webhook-id', () => {
    expect(verifier.verify(plantBody, sign(plantBody, 'msg_e1_v5', '5'))).toEqual({
      webhookId: 'msg_e1_v5',
      version: 5,
      format: 'plant',
      plant: { id: 9_223_372_036_854_775_807n, name: 'Fern' },
    });
    const eventBody =
      '{"type":"plant.deleted","timestamp":"2026-11-22T10:00:00.000Z","data":{"id":9223372036854775807,"version":6}}';
    expect(verifier.verify(eventBody, new Headers(sign(eventBody, 'msg_e2_v6')))).toMatchObject({
      version: 6,
      format: 'event',
      event: { type: 'plant.deleted', data: { id: 9_223_372_036_854_775_807n, version: 6 } },
    });
    expect(() => verifier.verify(`${plantBody} `, sign(plantBody, 'msg_e1_v5'))).toThrow();
  });

  it('ignores a plant-version header: a replay with a forged one keeps the signed version', () => {
    const genuine = sign(plantBody, 'msg_e1_v5', '5');
    const replayed = { ...genuine, 'plant-version': '9007199254740991' };
    expect(verifier.verify(plantBody, replayed).version).toBe(5);
    // And the webhook-id cannot be changed without breaking the signature.
    expect(() =>
      verifier.verify(plantBody, { ...genuine, 'webhook-id': 'msg_e1_v9007199254740991' }),
    ).toThrow();
  });
});

describe('held to openapi.yaml', () => {
  it("has the method each operation's x-client-method names", () => {
    const methods = operations.map(
      ({ operation }) => (operation as { 'x-client-method'?: string })['x-client-method'],
    );
    expect(methods).not.toContain(undefined);
    expect(new Set(methods).size).toBe(methods.length);
    const probe = new PlantStoreClient({ baseUrl: 'http://127.0.0.1:9', token: 'x' });
    for (const method of methods as string[]) {
      const owner = method.startsWith('webhookEndpoints.') ? probe.webhookEndpoints : probe;
      const name = method.replace('webhookEndpoints.', '');
      expect([method, typeof (owner as unknown as Record<string, unknown>)[name]]).toEqual([
        method,
        'function',
      ]);
    }
  });

  it('has the types generated from its schemas, as they are now (npm run client:types)', async () => {
    expect(readFileSync(schemaTypesPath, 'utf8')).toBe(await generateSchemaTypes());
    expect(Object.keys(openApiDocument.components.schemas).length).toBeGreaterThan(5);
  });
});
