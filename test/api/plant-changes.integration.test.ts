/**
 * Changing plants as a client does, through the local API: PUT and PATCH with If-Match, and the
 * races the conditional write settles. Every answer is checked against openapi.yaml.
 *
 * @services dynamodb-local
 */
import { describe, expect, it } from '@jest/globals';
import { requestRaw } from '../reliability/raw-request.ts';
import { usePlantChangeClient } from './plant-change-client.ts';

const client = usePlantChangeClient();
const { call, put, patch, get, createPlant, storedItem } = client;

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
    // The plant, its version, and the writing request's trace (docs/tracing.md); nothing sent.
    expect(Object.keys((await storedItem(id)) ?? {}).sort()).toEqual([
      'id',
      'name',
      'traceparent',
      'version',
    ]);
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
        client.api().url,
        'PUT',
        `/plants/${id}`,
        [
          ['Authorization', `Bearer ${client.token()}`],
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
