/**
 * The plants operations as any client sees them, on whichever target the suite runs against
 * (`target.ts`): create and its idempotent repeat, list and its paging by `Link`, read with
 * `ETag` and `If-None-Match`, and conditional `PUT`, `PATCH` and `DELETE`. Plants are made under
 * ids of this run's own and deleted afterwards.
 */
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect } from '@jest/globals';
import { expectDocumented, expectError } from './answers.ts';
import { caseNeeding } from './cases.ts';
import { call, nextLinkOf, plantTokens, target } from './target.ts';

/** This run's ids: far from any a person would use, and random per run. */
const base = 8_000_000_000_000_000n + BigInt(randomInt(0, 2 ** 47)) * 1000n;
const made = new Set<bigint>();
let writer: string;
let reader: string;

beforeAll(async () => {
  ({ writer, reader } = await plantTokens());
}, 60_000);

afterAll(async () => {
  if (!target().writes) return;
  for (const id of made) {
    await call('DELETE', `/plants/${id}`, { token: writer });
  }
}, 120_000);

function create(id: bigint, body: Record<string, unknown>) {
  made.add(id);
  return call('POST', '/plants', {
    token: writer,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ ...body, id: '§' }).replace('"§"', String(id)),
  });
}

describe('creating a plant', () => {
  caseNeeding('writes')(
    'answers 200 with the Plant and its ETag, the same to an identical repeat, and 400/40009 to other content',
    async () => {
      const id = base + 1n;
      const first = await create(id, { name: 'Fern', tag: 'shade' });
      expect(await expectDocumented(first, 'createPlant')).toEqual({ name: 'Fern', tag: 'shade' });
      expect(first.headers.etag).toMatch(/^"\d+"$/);
      const repeat = await create(id, { name: 'Fern', tag: 'shade' });
      expect(await expectDocumented(repeat, 'createPlant')).toEqual({ name: 'Fern', tag: 'shade' });
      await expectError(await create(id, { name: 'Ivy' }), 'createPlant', 400, 40009);
    },
    60_000,
  );

  caseNeeding('writes')(
    'keeps an int64 id exactly, written as 7e2-style or at the edge of the range',
    async () => {
      const id = 9_223_372_036_854_775_807n;
      made.add(id);
      const stored = await call('POST', '/plants', {
        token: writer,
        headers: { 'Content-Type': 'application/json' },
        body: `{"id":${id},"name":"Edge"}`,
      });
      expect([stored.status, stored.text]).toEqual([200, '{"name":"Edge"}']);
      const read = await call('GET', `/plants/${id}`, { token: reader });
      expect(read.text).toBe(`{"id":${id},"name":"Edge"}`);
      await call('DELETE', `/plants/${id}`, { token: writer });
    },
    60_000,
  );
});

describe('listing plants', () => {
  caseNeeding('writes')(
    'walks every plant exactly once by the next links, a page of limit at a time',
    async () => {
      const ids = [10n, 11n, 12n, 13n, 14n].map((offset) => base + offset);
      for (const id of ids) expect((await create(id, { name: `Plant ${id}` })).status).toBe(200);
      const seen: bigint[] = [];
      let next: string | undefined = '/plants?limit=2';
      let pages = 0;
      while (next !== undefined) {
        const page = await call('GET', next, { token: reader });
        expect([next, page.status]).toEqual([next, 200]);
        const plants = (await expectDocumented(page, 'listPlants')) as { id: number }[];
        expect(plants.length).toBeLessThanOrEqual(2);
        // Ids past 2^53 are exact in the text: read them from it.
        seen.push(
          ...[...page.text.matchAll(/"id":(-?\d+)/g)].map((match) => BigInt(match[1] as string)),
        );
        next = nextLinkOf(page);
        pages += 1;
        expect(pages).toBeLessThan(1000);
      }
      for (const id of ids) expect(seen.filter((found) => found === id)).toHaveLength(1);
    },
    120_000,
  );

  caseNeeding()('answers 200 with an array of stored plants to a reader', async () => {
    const page = await call('GET', '/plants?limit=3', { token: reader });
    expect(Array.isArray(await expectDocumented(page, 'listPlants'))).toBe(true);
  });
});

describe('reading and changing one plant', () => {
  caseNeeding('writes')(
    'reads it with an ETag, answers 304 to If-None-Match, and changes it only with a current If-Match',
    async () => {
      const id = base + 20n;
      expect((await create(id, { name: 'Oak' })).status).toBe(200);
      const read = await call('GET', `/plants/${id}`, { token: reader });
      expect(await expectDocumented(read, 'getPlant')).toEqual({ id: Number(id), name: 'Oak' });
      const etag = read.headers.etag as string;
      const notModified = await call('GET', `/plants/${id}`, {
        token: reader,
        headers: { 'If-None-Match': etag },
      });
      expect([notModified.status, notModified.text]).toEqual([304, '']);

      const put = (headers: Record<string, string>, body = '{"name":"Elm"}') =>
        call('PUT', `/plants/${id}`, {
          token: writer,
          headers: { 'Content-Type': 'application/json', ...headers },
          body,
        });
      await expectError(await put({}), 'replacePlant', 428, 42800);
      await expectError(await put({ 'If-Match': '"1"' }), 'replacePlant', 412, 41200);
      const replaced = await put({ 'If-Match': etag });
      expect(await expectDocumented(replaced, 'replacePlant')).toEqual({
        id: Number(id),
        name: 'Elm',
      });
      const after = replaced.headers.etag as string;
      expect(after).not.toBe(etag);

      const patched = await call('PATCH', `/plants/${id}`, {
        token: writer,
        headers: { 'Content-Type': 'application/merge-patch+json', 'If-Match': after },
        body: '{"tag":"tall"}',
      });
      expect(await expectDocumented(patched, 'patchPlant')).toEqual({
        id: Number(id),
        name: 'Elm',
        tag: 'tall',
      });
      const stale = await call('DELETE', `/plants/${id}`, {
        token: writer,
        headers: { 'If-Match': after },
      });
      await expectError(stale, 'deletePlant', 412, 41200);
      const deleted = await call('DELETE', `/plants/${id}`, {
        token: writer,
        headers: { 'If-Match': patched.headers.etag as string },
      });
      expect([deleted.status, deleted.text]).toEqual([204, '']);
      // Gone, and a delete again is a safe retry.
      await expectError(
        await call('GET', `/plants/${id}`, { token: reader }),
        'getPlant',
        404,
        40401,
      );
      expect((await call('DELETE', `/plants/${id}`, { token: writer })).status).toBe(204);
    },
    60_000,
  );

  caseNeeding()('answers 404/40401 for an id no plant has', async () => {
    await expectError(
      await call('GET', `/plants/${base + 999n}`, { token: reader }),
      'getPlant',
      404,
      40401,
    );
  });
});
