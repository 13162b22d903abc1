/**
 * Conditional requests as a client makes them, through the local API: ETags, GET with
 * If-None-Match, If-Match and If-None-Match together, DELETE with either. Every answer is checked
 * against openapi.yaml.
 *
 * @services dynamodb-local
 */
import { describe, expect, it } from '@jest/globals';
import { usePlantChangeClient } from './plant-change-client.ts';

const client = usePlantChangeClient();
const { call, put, patch, get, createPlant } = client;

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
      const response = await fetch(`${client.api().url}/plants/${id}`, {
        method,
        headers: { Authorization: `Bearer ${client.token()}`, ...headers },
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
