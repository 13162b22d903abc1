/**
 * The plants operations as any client sees them, on whichever target the suite runs against
 * (`target.ts`): create and its idempotent repeat, list and its paging by `Link`, read with
 * `ETag` and `If-None-Match`, and conditional `PUT`, `PATCH` and `DELETE`. Plants are made under
 * ids no plant has, and only those the run made are deleted afterwards (`own-plants.ts`).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect } from '@jest/globals';
import { expectDocumented, expectError } from './answers.ts';
import { caseNeeding, caseUnless } from './cases.ts';
import { freeIds, OwnPlants, takenReason } from './own-plants.ts';
import { call, nextLinkOf, plantTokens, target } from './target.ts';

const { writer, reader } = await plantTokens();
/** This run's ids: far from any a person would use, random per run, and free. */
const ids = await freeIds(8_000_000_000_000_000n, 10, reader);
const id = (index: number) => ids[index] as bigint;
/** The largest int64: a case of its own, run only where no plant has it. */
const edge = 9_223_372_036_854_775_807n;
const edgeTaken = await takenReason(edge, reader);
const made = new OwnPlants();
/** Marks what this run writes where another run may write the same id. */
const runMark = randomBytes(6).toString('hex');

afterAll(async () => {
  if (target().writes) await made.removeAll(writer);
}, 120_000);

const create = (plantId: bigint, body: Record<string, unknown>) =>
  made.create(plantId, body, writer);

describe('creating a plant', () => {
  caseNeeding('writes')(
    'answers 200 with the Plant and its ETag, the same to an identical repeat, and 400/40009 to other content',
    async () => {
      const first = await create(id(1), { name: 'Fern', tag: 'shade' });
      expect(await expectDocumented(first, 'createPlant')).toEqual({ name: 'Fern', tag: 'shade' });
      expect(first.headers.etag).toMatch(/^"\d+"$/);
      const repeat = await create(id(1), { name: 'Fern', tag: 'shade' });
      expect(await expectDocumented(repeat, 'createPlant')).toEqual({ name: 'Fern', tag: 'shade' });
      await expectError(await create(id(1), { name: 'Ivy' }), 'createPlant', 400, 40009);
    },
    60_000,
  );

  caseUnless(edgeTaken, 'writes')(
    'keeps an int64 id exactly, written as 7e2-style or at the edge of the range',
    async () => {
      // A name of this run's own: another run at once (a person's, the pipeline's smoke) that
      // takes the edge first makes this create a conflict, never a plant both think theirs.
      const name = `Edge ${runMark}`;
      const stored = await create(edge, { name });
      if (stored.status === 400) {
        await expectError(stored, 'createPlant', 400, 40009);
        console.info(`Another run holds id ${edge} meanwhile: its plant is left to it.`);
        return;
      }
      expect([stored.status, stored.text]).toEqual([200, JSON.stringify({ name })]);
      const read = await call('GET', `/plants/${edge}`, { token: reader });
      expect(read.text).toBe(`{"id":${edge},"name":${JSON.stringify(name)}}`);
      const deleted = await call('DELETE', `/plants/${edge}`, {
        token: writer,
        headers: { 'If-Match': read.headers.etag as string },
      });
      expect(deleted.status).toBe(204);
      made.deleted(edge);
    },
    60_000,
  );
});

describe('listing plants', () => {
  caseNeeding('writes')(
    'walks every plant exactly once by the next links, a page of limit at a time',
    async () => {
      const listed = [2, 3, 4, 5, 6].map(id);
      for (const plantId of listed) {
        expect((await create(plantId, { name: `Plant ${plantId}` })).status).toBe(200);
      }
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
      for (const plantId of listed) {
        expect(seen.filter((found) => found === plantId)).toHaveLength(1);
      }
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
      const oak = id(7);
      expect((await create(oak, { name: 'Oak' })).status).toBe(200);
      const read = await call('GET', `/plants/${oak}`, { token: reader });
      expect(await expectDocumented(read, 'getPlant')).toEqual({ id: Number(oak), name: 'Oak' });
      const etag = read.headers.etag as string;
      const notModified = await call('GET', `/plants/${oak}`, {
        token: reader,
        headers: { 'If-None-Match': etag },
      });
      expect([notModified.status, notModified.text]).toEqual([304, '']);

      const put = (headers: Record<string, string>, body = '{"name":"Elm"}') =>
        call('PUT', `/plants/${oak}`, {
          token: writer,
          headers: { 'Content-Type': 'application/json', ...headers },
          body,
        });
      await expectError(await put({}), 'replacePlant', 428, 42800);
      await expectError(await put({ 'If-Match': '"1"' }), 'replacePlant', 412, 41200);
      const replaced = await put({ 'If-Match': etag });
      expect(await expectDocumented(replaced, 'replacePlant')).toEqual({
        id: Number(oak),
        name: 'Elm',
      });
      const after = replaced.headers.etag as string;
      made.changed(oak, after);
      expect(after).not.toBe(etag);

      const patched = await call('PATCH', `/plants/${oak}`, {
        token: writer,
        headers: { 'Content-Type': 'application/merge-patch+json', 'If-Match': after },
        body: '{"tag":"tall"}',
      });
      made.changed(oak, patched.headers.etag);
      expect(await expectDocumented(patched, 'patchPlant')).toEqual({
        id: Number(oak),
        name: 'Elm',
        tag: 'tall',
      });
      const stale = await call('DELETE', `/plants/${oak}`, {
        token: writer,
        headers: { 'If-Match': after },
      });
      await expectError(stale, 'deletePlant', 412, 41200);
      const deleted = await call('DELETE', `/plants/${oak}`, {
        token: writer,
        headers: { 'If-Match': patched.headers.etag as string },
      });
      expect([deleted.status, deleted.text]).toEqual([204, '']);
      made.deleted(oak);
      // Gone, and a delete again is a safe retry.
      await expectError(
        await call('GET', `/plants/${oak}`, { token: reader }),
        'getPlant',
        404,
        40401,
      );
      expect((await call('DELETE', `/plants/${oak}`, { token: writer })).status).toBe(204);
    },
    60_000,
  );

  caseNeeding()('answers 404/40401 for an id no plant has', async () => {
    await expectError(
      await call('GET', `/plants/${id(9)}`, { token: reader }),
      'getPlant',
      404,
      40401,
    );
  });
});

describe('tracing a request', () => {
  caseNeeding()('answers in the client’s W3C trace, naming a span of its own', async () => {
    const [traceId, spanId] = [randomBytes(16).toString('hex'), randomBytes(8).toString('hex')];
    const read = await call('GET', `/plants/${id(9)}`, {
      token: reader,
      headers: { traceparent: `00-${traceId}-${spanId}-01` },
    });
    await expectError(read, 'getPlant', 404, 40401);
    const answered = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(
      String(read.headers.traceresponse),
    );
    expect(answered?.[1]).toBe(traceId);
    expect(answered?.[2]).not.toBe(spanId);
  });
});
