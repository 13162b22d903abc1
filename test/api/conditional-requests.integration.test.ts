/**
 * Changing plants as a client does, through the local API (gateway stand-in, authorizer, the
 * functions, DynamoDB Local): PUT and PATCH with If-Match, ETags, GET with If-None-Match, the
 * races the conditional write settles. Every answer is checked against openapi.yaml.
 *
 * @services dynamodb-local
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLogger } from '../../functions/shared/logger.ts';
import { type LocalApi, startLocalApi } from '../../local/local-api.ts';
import { requestRaw } from '../reliability/raw-request.ts';
import { createTestTable, type TestTable } from '../support/test-store.ts';
import { expectDocumentedResponse } from './openapi.ts';

let keysDirectory: string;
let api: LocalApi;
let table: TestTable;
let token: string;
let nextId = 1000;

beforeAll(async () => {
  keysDirectory = await mkdtemp(join(tmpdir(), 'plant-store-conditional-keys-'));
  table = await createTestTable();
  api = await startLocalApi({
    port: 0,
    dynamoDbEndpoint: table.endpoint,
    tableName: table.tableName,
    keysDirectory,
    throttlingStage: 'off',
    logger: createLogger({}, () => {}),
  });
  token = api.signToken();
});

afterAll(async () => {
  await api?.stop();
  await table?.remove();
  await rm(keysDirectory, { recursive: true, force: true });
});

interface Answer {
  readonly status: number;
  readonly etag: string | null;
  readonly body: unknown;
}

/** Sends a request with the token and checks the answer against openapi.yaml. */
async function call(
  operationId: string,
  method: string,
  path: string,
  options: { body?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const response = await fetch(`${api.url}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${token}`,
      ...(options.body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...options.headers,
    },
    ...(options.body === undefined ? {} : { body: options.body }),
  });
  const etag = response.headers.get('etag');
  const body = await expectDocumentedResponse(response, operationId);
  return { status: response.status, etag, body };
}

const put = (id: bigint | number, body: string, ifMatch?: string) =>
  call('replacePlant', 'PUT', `/plants/${id}`, {
    body,
    headers: ifMatch === undefined ? {} : { 'If-Match': ifMatch },
  });

const patch = (id: bigint | number, body: string, ifMatch?: string, contentType?: string) =>
  call('patchPlant', 'PATCH', `/plants/${id}`, {
    body,
    headers: {
      'Content-Type': contentType ?? 'application/merge-patch+json',
      ...(ifMatch === undefined ? {} : { 'If-Match': ifMatch }),
    },
  });

const get = (id: bigint | number, ifNoneMatch?: string) =>
  call('getPlant', 'GET', `/plants/${id}`, {
    headers: ifNoneMatch === undefined ? {} : { 'If-None-Match': ifNoneMatch },
  });

/** Creates a new plant and answers its id and ETag. */
async function createPlant(name = 'Monstera', tag: string | null = 'tropical') {
  nextId += 1;
  const id = nextId;
  const body = JSON.stringify(tag === null ? { id, name } : { id, name, tag });
  const created = await call('createPlant', 'POST', '/plants', { body });
  expect(created.status).toBe(200);
  return { id, etag: created.etag as string };
}

/** The item as stored, or undefined. */
async function storedItem(id: number) {
  return (await table.scanItems()).find((item) => String(item.id) === String(id));
}

describe('ETags', () => {
  it('are strong, the same on the create, every read and every repeat of the create', async () => {
    const { id, etag } = await createPlant();
    expect(etag).toMatch(/^"[0-9]+"$/);
    const reads = [await get(id), await get(id)];
    expect(reads.map((read) => [read.status, read.etag])).toEqual([
      [200, etag],
      [200, etag],
    ]);
    const repeat = await call('createPlant', 'POST', '/plants', {
      body: JSON.stringify({ id, name: 'Monstera', tag: 'tropical' }),
    });
    expect([repeat.status, repeat.etag]).toEqual([200, etag]);
  });

  it('change with every change (A → B → A gives three), and never come back', async () => {
    const { id, etag: first } = await createPlant('A', null);
    const toB = await put(id, '{"name":"B"}', first);
    const toA = await put(id, '{"name":"A"}', toB.etag as string);
    const tagged = await patch(id, '{"tag":"t"}', toA.etag as string);
    const etags = [first, toB.etag, toA.etag, tagged.etag];
    expect(new Set(etags).size).toBe(4);
    // The version grows: a receiver or client can order them.
    const versions = etags.map((etag) => Number(JSON.parse(etag as string)));
    expect(versions).toEqual([...versions].sort((a, b) => a - b));
    expect((await get(id)).etag).toBe(tagged.etag);
  });

  it('of a plant deleted and created again never match the old one', async () => {
    const { id, etag } = await createPlant();
    expect((await call('deletePlant', 'DELETE', `/plants/${id}`)).status).toBe(204);
    const again = await call('createPlant', 'POST', '/plants', {
      body: JSON.stringify({ id, name: 'Monstera', tag: 'tropical' }),
    });
    expect(again.etag).not.toBe(etag);
    expect(Number(JSON.parse(again.etag as string))).toBeGreaterThan(Number(JSON.parse(etag)));
    expect((await put(id, '{"name":"Old view"}', etag)).body).toMatchObject({ error: 41200 });
  });

  it('of a plant deleted and created again right after a burst of changes never match it either', async () => {
    const { id } = await createPlant('Burst', null);
    const burst = await Promise.all(
      Array.from({ length: 30 }, (_, index) =>
        patch(id, JSON.stringify({ tag: `b${index}` }), '*'),
      ),
    );
    const old = burst.map((answer) => answer.etag as string);
    expect((await call('deletePlant', 'DELETE', `/plants/${id}`)).status).toBe(204);
    const again = await call('createPlant', 'POST', '/plants', {
      body: JSON.stringify({ id, name: 'Burst' }),
    });
    const versionOf = (etag: string) => Number(JSON.parse(etag));
    expect(versionOf(again.etag as string)).toBeGreaterThan(Math.max(...old.map(versionOf)));
    const stale = await Promise.all(old.map((etag) => put(id, '{"name":"Old view"}', etag)));
    expect(stale.map((answer) => answer.status)).toEqual(old.map(() => 412));
  });
});

describe('GET with If-None-Match', () => {
  it('answers 304 without a body for the current ETag (weak or strong, in a list, or *)', async () => {
    const { id, etag } = await createPlant();
    for (const header of [etag, `W/${etag}`, `"1", ${etag}`, '*']) {
      const answer = await get(id, header);
      expect([header, answer.status, answer.etag, answer.body]).toEqual([
        header,
        304,
        etag,
        undefined,
      ]);
    }
  });

  it('answers 304 (and a delete 204) with neither Content-Length nor, for the 304, Content-Type', async () => {
    const { id, etag } = await createPlant();
    const headersOf = async (method: string, headers: Record<string, string>) => {
      const response = await fetch(`${api.url}/plants/${id}`, {
        method,
        headers: { Authorization: `Bearer ${token}`, ...headers },
      });
      await response.arrayBuffer();
      return [
        response.status,
        response.headers.get('content-length'),
        response.headers.get('content-type'),
        response.headers.get('etag'),
      ];
    };
    expect(await headersOf('GET', { 'If-None-Match': etag })).toEqual([304, null, null, etag]);
    expect((await headersOf('DELETE', {})).slice(0, 2)).toEqual([204, null]);
  });

  it('answers 200 with the plant for another ETag, and 404 for a missing plant', async () => {
    const { id } = await createPlant();
    expect((await get(id, '"1"')).status).toBe(200);
    expect((await get(id, 'not-a-tag')).status).toBe(200);
    expect((await get(987_654_321, '*')).body).toMatchObject({ error: 40401 });
  });
});

describe('If-Match and If-None-Match together (RFC 9110 §13.2.2)', () => {
  const read = (id: number, headers: Record<string, string>) =>
    call('getPlant', 'GET', `/plants/${id}`, { headers });
  const replace = (id: number, headers: Record<string, string>) =>
    call('replacePlant', 'PUT', `/plants/${id}`, { body: '{"name":"Changed"}', headers });

  it('reads with If-Match: 412 unless it names the current ETag (strongly) or is *, before If-None-Match', async () => {
    const { id, etag } = await createPlant();
    expect((await read(id, { 'If-Match': etag })).status).toBe(200);
    expect((await read(id, { 'If-Match': '*' })).status).toBe(200);
    expect((await read(id, { 'If-Match': `"1", ${etag}` })).status).toBe(200);
    for (const stale of ['"1"', `W/${etag}`]) {
      expect((await read(id, { 'If-Match': stale })).body).toEqual({
        error: 41200,
        message: 'The plant has changed since the ETag in If-Match; read it again.',
      });
    }
    expect((await read(id, { 'If-Match': etag, 'If-None-Match': etag })).status).toBe(304);
    expect((await read(id, { 'If-Match': '"1"', 'If-None-Match': etag })).status).toBe(412);
    expect((await read(987_654_321, { 'If-Match': '"1"' })).status).toBe(404);
  });

  it('refuses a change whose plant has a version If-None-Match names (or any, for *): 412, nothing written', async () => {
    const { id, etag } = await createPlant();
    const refusal = {
      error: 41200,
      message: 'The plant has a version that If-None-Match names (any version, for *).',
    };
    for (const ifNoneMatch of ['*', etag, `W/${etag}`, `"1", ${etag}`]) {
      for (const ifMatch of [etag, '*']) {
        const answer = await replace(id, { 'If-Match': ifMatch, 'If-None-Match': ifNoneMatch });
        expect([ifMatch, ifNoneMatch, answer.status, answer.body]).toEqual([
          ifMatch,
          ifNoneMatch,
          412,
          refusal,
        ]);
      }
    }
    expect((await get(id)).etag).toBe(etag);
    // If-Match is evaluated first, and a missing plant is still 404.
    const stale = await replace(id, { 'If-Match': '"1"', 'If-None-Match': etag });
    expect(stale.body).toMatchObject({
      error: 41200,
      message: expect.stringContaining('If-Match;'),
    });
    expect((await replace(987_654_321, { 'If-Match': '*', 'If-None-Match': '*' })).status).toBe(
      404,
    );
    // If-None-Match naming another version lets the change through.
    const changed = await replace(id, { 'If-Match': etag, 'If-None-Match': '"1"' });
    expect([changed.status, changed.body]).toEqual([200, { id, name: 'Changed' }]);
  });
});

describe('DELETE with If-Match or If-None-Match', () => {
  const remove = (id: number, headers: Record<string, string> = {}) =>
    call('deletePlant', 'DELETE', `/plants/${id}`, { headers });

  it('removes the plant only at a version If-Match names: 412 and nothing removed otherwise', async () => {
    const { id, etag } = await createPlant();
    for (const stale of ['"1"', `W/${etag}`, 'not-a-tag']) {
      expect([stale, (await remove(id, { 'If-Match': stale })).body]).toEqual([
        stale,
        {
          error: 41200,
          message: 'The plant has changed since the ETag in If-Match; read it again.',
        },
      ]);
    }
    expect((await get(id)).etag).toBe(etag);
    expect((await remove(id, { 'If-Match': `"1", ${etag}` })).status).toBe(204);
    expect((await get(id)).status).toBe(404);
    // Gone already (a retry whose first answer was lost): still 204.
    expect((await remove(id, { 'If-Match': etag })).status).toBe(204);
    const any = await createPlant();
    expect((await remove(any.id, { 'If-Match': '*' })).status).toBe(204);
    expect((await get(any.id)).status).toBe(404);
  });

  it('keeps the plant when If-None-Match names its version, or is *', async () => {
    const { id, etag } = await createPlant();
    for (const ifNoneMatch of [etag, `W/${etag}`, '*']) {
      expect((await remove(id, { 'If-None-Match': ifNoneMatch })).body).toMatchObject({
        error: 41200,
      });
    }
    expect((await remove(id, { 'If-None-Match': '"1"' })).status).toBe(204);
    expect((await get(id)).status).toBe(404);
  });

  it('never removes a plant changed since the version its If-Match names, whoever wins the race', async () => {
    for (let round = 0; round < 5; round += 1) {
      const { id, etag } = await createPlant();
      const [changed, removed] = await Promise.all([
        put(id, '{"name":"Changed"}', etag),
        remove(id, { 'If-Match': etag }),
      ]);
      // Exactly one of the two acted on the version both named: the change (the delete then
      // finds another version) or the delete (the change then finds no plant).
      const outcome = [changed.status, removed.status];
      expect([
        [200, 412],
        [404, 204],
      ]).toContainEqual(outcome);
      expect((await get(id)).status).toBe(outcome[0] === 200 ? 200 : 404);
    }
  });
});

describe('PUT /plants/{id}', () => {
  it('replaces name and tag (no tag removes it) with the current ETag, and answers the new ETag', async () => {
    const { id, etag } = await createPlant();
    const answer = await put(id, '{"name":"Fern"}', etag);
    expect(answer).toEqual({ status: 200, etag: expect.any(String), body: { id, name: 'Fern' } });
    expect(answer.etag).not.toBe(etag);
    expect(await get(id)).toEqual({ status: 200, etag: answer.etag, body: { id, name: 'Fern' } });
    expect((await storedItem(id))?.tag).toBeUndefined();
  });

  it('takes an id in the body only when it is the path’s, and never stores undeclared fields', async () => {
    const { id, etag } = await createPlant();
    const other = await put(id, `{"id":${id + 1},"name":"Fern"}`, etag);
    expect([other.status, other.body]).toEqual([
      400,
      {
        error: 40002,
        message: `Invalid plant: id must be an integer from -9223372036854775808 to 9223372036854775807, the id in the path.`,
      },
    ]);
    const same = await put(id, `{"id":${id},"name":"Fern","colour":"green"}`, etag);
    expect(same.status).toBe(200);
    expect(Object.keys((await storedItem(id)) ?? {}).sort()).toEqual(['id', 'name', 'version']);
  });

  it('answers 428/42800 without If-Match, 412/41200 for another version, 404/40401 for a missing plant', async () => {
    const { id, etag } = await createPlant();
    expect((await put(id, '{"name":"Fern"}')).body).toEqual({
      error: 42800,
      message: 'A change needs If-Match with the ETag of the plant read last.',
    });
    expect((await put(id, '{"name":"Fern"}', '"1"')).body).toEqual({
      error: 41200,
      message: 'The plant has changed since the ETag in If-Match; read it again.',
    });
    // A weak tag never matches (strong comparison), nor does a malformed one.
    expect((await put(id, '{"name":"Fern"}', `W/${etag}`)).status).toBe(412);
    expect((await put(id, '{"name":"Fern"}', etag.slice(1, -1))).status).toBe(412);
    expect((await put(987_654_321, '{"name":"Fern"}', '*')).body).toMatchObject({ error: 40401 });
    expect((await put(987_654_321, '{"name":"Fern"}', etag)).status).toBe(404);
    expect(await storedItem(987_654_321)).toBeUndefined();
    // Nothing of the refused changes was written.
    expect((await get(id)).etag).toBe(etag);
  });

  it('answers an ETag no plant can have with 412 (404 for no plant), never a fault', async () => {
    const { id } = await createPlant();
    for (const tag of ['"9007199254740991"', '"99999999999999999999"', '"-1"', '"00"']) {
      expect([tag, (await put(id, '{"name":"Fern"}', tag)).status]).toEqual([tag, 412]);
      expect([tag, (await patch(987_654_321, '{"tag":"x"}', tag)).status]).toEqual([tag, 404]);
    }
  });

  it('reads If-Match lines whose names differ in case as one list', async () => {
    const { id, etag } = await createPlant();
    // Two header lines (fetch would join them into one): the second names the stored version.
    const twoLines = (first: string, second: string) =>
      requestRaw(
        api.url,
        'PUT',
        `/plants/${id}`,
        [
          ['Authorization', `Bearer ${token}`],
          ['Content-Type', 'application/json'],
          ['If-Match', first],
          ['if-match', second],
        ],
        '{"name":"Fern"}',
      );
    expect((await twoLines('"1"', etag)).status).toBe(200);
    expect((await twoLines('"1"', '"2"')).status).toBe(412);
  });

  it('accepts If-Match as a list, and * as any version', async () => {
    const { id, etag } = await createPlant();
    const listed = await put(id, '{"name":"Fern"}', `"1", ${etag}`);
    expect(listed.status).toBe(200);
    const any = await put(id, '{"name":"Moss"}', '*');
    expect([any.status, any.body]).toEqual([200, { id, name: 'Moss' }]);
  });

  it('checks the body before If-Match: 40003, 40001, 40002, 40004, each in the Error shape', async () => {
    const { id } = await createPlant();
    const invalid = (body: string, headers: Record<string, string> = {}) =>
      call('replacePlant', 'PUT', `/plants/${id}`, { body, headers });
    expect((await invalid('{"name":"x"}', { 'Content-Type': 'text/plain' })).body).toMatchObject({
      error: 40003,
    });
    expect((await invalid('{"name":')).body).toMatchObject({ error: 40001 });
    expect((await invalid('{"name":null}')).body).toMatchObject({ error: 40002 });
    expect((await invalid(JSON.stringify({ name: 'x'.repeat(17_000) }))).body).toMatchObject({
      error: 40004,
    });
  });

  it('writes nothing when nothing changes: 200, the same ETag', async () => {
    const { id, etag } = await createPlant();
    const same = await put(id, '{"name":"Monstera","tag":"tropical"}', etag);
    expect([same.status, same.etag]).toEqual([200, etag]);
    expect(String((await storedItem(id))?.version)).toBe(JSON.parse(etag));
  });
});

describe('PATCH /plants/{id} (JSON merge patch)', () => {
  it('changes only what it names; tag null removes the tag; {} changes nothing', async () => {
    const { id, etag } = await createPlant();
    const renamed = await patch(id, '{"name":"Fern"}', etag);
    expect(renamed.body).toEqual({ id, name: 'Fern', tag: 'tropical' });
    const untagged = await patch(id, '{"tag":null}', renamed.etag as string);
    expect(untagged.body).toEqual({ id, name: 'Fern' });
    const empty = await patch(id, '{}', untagged.etag as string);
    expect([empty.status, empty.etag, empty.body]).toEqual([
      200,
      untagged.etag,
      { id, name: 'Fern' },
    ]);
    const retagged = await patch(id, '{"tag":"shade","colour":"green"}', '*');
    expect(retagged.body).toEqual({ id, name: 'Fern', tag: 'shade' });
  });

  it('refuses a name of null or another type, a tag that is not a string, and a body that is not an object', async () => {
    const { id, etag } = await createPlant();
    expect((await patch(id, '{"name":null,"tag":5}', etag)).body).toEqual({
      error: 40002,
      message:
        'Invalid plant: name must be a string when present; tag must be a string, or null to remove it.',
    });
    expect((await patch(id, '["tag"]', etag)).body).toMatchObject({ error: 40002 });
    expect((await patch(id, 'null', etag)).body).toMatchObject({ error: 40002 });
    expect((await get(id)).etag).toBe(etag);
  });

  it('takes only application/merge-patch+json (40003), and answers 428, 412 and 404 as PUT does', async () => {
    const { id, etag } = await createPlant();
    expect((await patch(id, '{}', etag, 'application/json')).body).toEqual({
      error: 40003,
      message: 'The request content type must be application/merge-patch+json.',
    });
    expect((await patch(id, '{"tag":"x"}')).status).toBe(428);
    expect((await patch(id, '{"tag":"x"}', '"1"')).status).toBe(412);
    expect((await patch(id, '{}', '"1"')).status).toBe(412);
    expect((await patch(987_654_321, '{}', '*')).status).toBe(404);
    expect((await patch(987_654_321, '{"tag":"x"}', '*')).status).toBe(404);
  });

  it('writes nothing for a patch that leaves the plant as it is', async () => {
    const { id, etag } = await createPlant();
    for (const body of [
      '{"name":"Monstera"}',
      '{"tag":"tropical"}',
      '{"name":"Monstera","tag":"tropical"}',
    ]) {
      expect((await patch(id, body, etag)).etag).toBe(etag);
    }
    const { id: bare, etag: bareEtag } = await createPlant('Bare', null);
    expect((await patch(bare, '{"tag":null}', bareEtag)).etag).toBe(bareEtag);
  });
});

describe('races', () => {
  it('lets exactly one of 50 concurrent PUTs with the same If-Match win, the rest 412, and stores the winner’s plant', async () => {
    const { id, etag } = await createPlant();
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        put(id, JSON.stringify({ name: `Racer ${index}` }), etag),
      ),
    );
    const winners = answers.filter((answer) => answer.status === 200);
    expect(winners).toHaveLength(1);
    expect(answers.filter((answer) => answer.status === 412)).toHaveLength(49);
    const stored = await get(id);
    expect(stored.body).toEqual(winners[0]?.body);
    expect(stored.etag).toBe(winners[0]?.etag);
  });

  it('never brings back a plant deleted while it is being changed: each change answers 200 or 404', async () => {
    for (let round = 0; round < 10; round += 1) {
      const { id } = await createPlant();
      const changes = Array.from({ length: 10 }, (_, index) =>
        index % 2 === 0
          ? put(id, JSON.stringify({ name: `Change ${index}` }), '*')
          : patch(id, JSON.stringify({ tag: `tag ${index}` }), '*'),
      );
      const [deleted, ...answers] = await Promise.all([
        call('deletePlant', 'DELETE', `/plants/${id}`),
        ...changes,
      ]);
      expect(deleted.status).toBe(204);
      for (const answer of answers) expect([200, 404]).toContain(answer.status);
      expect(await storedItem(id)).toBeUndefined();
      expect((await get(id)).status).toBe(404);
    }
  });

  it('answers 50 concurrent PATCHes with If-Match * each 200 with a version of its own', async () => {
    const { id } = await createPlant('Counter', null);
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        patch(id, JSON.stringify({ tag: `t${index}` }), '*'),
      ),
    );
    // A `*` change that loses its first write to another change counts on from the version it
    // found: two writes at most, never a 412 or a 503 however many race it (while the plant
    // is not deleted and created again in between).
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
    const versions = answers.map((answer) => Number(JSON.parse(answer.etag as string)));
    expect(new Set(versions).size).toBe(50);
    const stored = await get(id);
    expect(Number(JSON.parse(stored.etag as string))).toBe(Math.max(...versions));
  });
});
