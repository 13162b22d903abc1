/**
 * GET /plants on DynamoDB Local through the real handler: pages walked by following their Link
 * headers, with limits 1, 7 and 100 over a few hundred plants including the int64 extremes, while
 * other clients create and delete; and every limit and cursor a client may send.
 *
 * @services dynamodb-local
 */

import { BatchWriteCommand, DeleteCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { APIGatewayProxyResult } from 'aws-lambda';
import fc from 'fast-check';
import { createHandler } from '../../../functions/list-plants/create-handler.ts';
import { listSegments } from '../../../functions/list-plants/list-plants.ts';
import { decodeCursor, encodeCursor } from '../../../functions/list-plants/page-cursor.ts';
import { int64Max, int64Min } from '../../../functions/shared/http/int64-json.ts';
import { itemsNotPlantsLog } from '../../../functions/shared/plants/stored-plant.ts';
import { createLogger } from '../../../functions/shared/platform/logger.ts';
import { createLambdaContext, createPlantsEvent } from '../../support/api-gateway-event.ts';
import { createTestTable, type TestTable } from '../../support/test-store.ts';

/** The cursor of a one-segment walk after `after`: the only kind the list wrote before segments. */
const cursorAt = (after: bigint) => encodeCursor({ segments: 1, first: 0, segment: 0, after });

let table: TestTable;
let listPlants: ReturnType<typeof createHandler>;

/** The seeded plants: a few hundred ids, the int64 extremes and the edges of a double among them. */
const seededIds = [
  int64Min,
  int64Min + 1n,
  -(2n ** 53n) - 1n,
  -1n,
  0n,
  1n,
  2n ** 53n + 1n,
  int64Max - 1n,
  int64Max,
  ...Array.from({ length: 291 }, (_, index) => BigInt(index * 7919 + 2)),
];

async function putPlants(ids: readonly bigint[]): Promise<void> {
  for (let start = 0; start < ids.length; start += 25) {
    const batch = ids.slice(start, start + 25).map((id) => ({
      PutRequest: { Item: { id, name: `Plant ${id}`, ...(id % 2n === 0n ? { tag: 'even' } : {}) } },
    }));
    await table.documentClient.send(
      new BatchWriteCommand({ RequestItems: { [table.tableName]: batch } }),
    );
  }
}

function list(query: Record<string, string | readonly string[]> = {}) {
  return listPlants(createPlantsEvent('GET', { query }), createLambdaContext());
}

/** The ids of a page, read exactly from the body's text (a JSON.parse would round them). */
function idsOf(response: APIGatewayProxyResult): bigint[] {
  return [...response.body.matchAll(/"id":(-?\d+)/g)].map((match) => BigInt(match[1] as string));
}

/** The query of a page's `next` link, or undefined on the last page. */
function nextQuery(response: APIGatewayProxyResult): Record<string, string> | undefined {
  const link = response.headers?.Link;
  if (link === undefined) return undefined;
  const match = /^<([^>]+)>; rel="next"$/.exec(String(link));
  if (match?.[1] === undefined) throw new Error(`not a next link: ${link}`);
  const url = new URL(match[1]);
  // Absolute, on the host and stage the client called.
  expect(`${url.origin}${url.pathname}`).toBe(
    'https://abc123.execute-api.eu-west-1.amazonaws.com/dev/plants',
  );
  return Object.fromEntries(url.searchParams);
}

/**
 * The first page of a one-segment walk, as the list answered before segments: a Scan from the
 * table's start, and the cursor after its last plant.
 */
async function listOneSegment(): Promise<{ ids: bigint[]; next?: string }> {
  const { Items = [], LastEvaluatedKey } = await table.documentClient.send(
    new ScanCommand({ TableName: table.tableName, Limit: 50, ConsistentRead: true }),
  );
  const ids = Items.map((item) => BigInt(String(item.id)));
  const last = ids.at(-1);
  return LastEvaluatedKey === undefined || last === undefined
    ? { ids }
    : { ids, next: cursorAt(last) };
}

/** Walks every page from the first, following the links as a client would. */
async function walk(limit: number, onPage: () => Promise<void> = async () => {}) {
  const seen: bigint[] = [];
  let query: Record<string, string> | undefined = { limit: String(limit) };
  let pages = 0;
  while (query !== undefined) {
    const response = await list(query);
    expect(response.statusCode).toBe(200);
    const ids = idsOf(response);
    expect(ids.length).toBeLessThanOrEqual(limit);
    query = nextQuery(response);
    // Only the last page may hold fewer than the limit (no item here is near DynamoDB's 1 MB).
    if (query !== undefined) expect(ids).toHaveLength(limit);
    seen.push(...ids);
    pages += 1;
    await onPage();
  }
  return { seen, pages };
}

beforeAll(async () => {
  table = await createTestTable();
  listPlants = createHandler({
    documentClient: table.documentClient,
    tableName: table.tableName,
    logger: createLogger({}, () => {}),
  });
  await putPlants(seededIds);
});

afterAll(async () => {
  await table?.remove();
});

describe('GET /plants', () => {
  it('answers 20 StoredPlants by default, with exact ids and the tag only when present', async () => {
    const response = await list();
    expect(response.statusCode).toBe(200);
    expect(response.headers?.['Content-Type']).toBe('application/json');
    const ids = idsOf(response);
    expect(ids).toHaveLength(20);
    for (const id of ids) {
      const expected = id % 2n === 0n ? `"tag":"even"` : '';
      expect(response.body).toContain(
        `{"id":${id},"name":"Plant ${id}"${expected === '' ? '' : `,${expected}`}}`,
      );
    }
  });

  it.each([1, 7, 100])(
    'walks every plant exactly once with limit %i, the last page without a link',
    async (limit) => {
      const { seen, pages } = await walk(limit);
      expect(seen).toHaveLength(seededIds.length);
      expect(new Set(seen)).toEqual(new Set(seededIds));
      expect(pages).toBe(Math.ceil(seededIds.length / limit));
    },
  );

  it('returns every plant that exists for the whole walk exactly once while others create and delete', async () => {
    // Plants that come and go during the walk: created before it and deleted page by page,
    // and new ones created page by page.
    const churned = Array.from({ length: 60 }, (_, index) => 10_000_000n + BigInt(index));
    await putPlants(churned);
    let created = 0;
    const createdIds: bigint[] = [];
    const { seen } = await walk(7, async () => {
      const newId = 20_000_000n + BigInt(created++);
      createdIds.push(newId);
      await Promise.all([
        table.documentClient.send(
          new PutCommand({ TableName: table.tableName, Item: { id: newId, name: 'New' } }),
        ),
        churned.length > 0
          ? table.documentClient.send(
              new DeleteCommand({ TableName: table.tableName, Key: { id: churned.pop() } }),
            )
          : Promise.resolve(),
      ]);
    });
    // Never twice, never anything that did not exist, and every stable plant.
    expect(new Set(seen).size).toBe(seen.length);
    const known = new Set([
      ...seededIds,
      ...createdIds,
      ...Array.from({ length: 60 }, (_, i) => 10_000_000n + BigInt(i)),
    ]);
    for (const id of seen) expect(known.has(id)).toBe(true);
    for (const id of seededIds) expect(seen).toContain(id);
    expect(created).toBeGreaterThan(40);
    // Tidy up for the other tests.
    for (const id of [...createdIds, ...churned]) {
      await table.documentClient.send(
        new DeleteCommand({ TableName: table.tableName, Key: { id } }),
      );
    }
  });

  it('begins each walk in a random segment of the table, so first pages spread over it', async () => {
    // Page 1 of a walk reads one of `listSegments` key ranges: thirty first pages, several starts.
    const firsts = new Set<bigint>();
    for (let walkIndex = 0; walkIndex < 30; walkIndex += 1) {
      const [firstId] = idsOf(await list({ limit: '3' }));
      if (firstId !== undefined) firsts.add(firstId);
    }
    expect(firsts.size).toBeGreaterThan(2);
    expect(firsts.size).toBeLessThanOrEqual(listSegments);
  });

  it('carries on a walk from a cursor of one segment, as the list wrote before segments, to its end exactly once', async () => {
    const firstPage = await listOneSegment();
    const seen = [...firstPage.ids];
    let query: Record<string, string> | undefined =
      firstPage.next === undefined ? undefined : { limit: '50', cursor: firstPage.next };
    while (query !== undefined) {
      const response = await list(query);
      seen.push(...idsOf(response));
      query = nextQuery(response);
      // Still one segment: the cursor's own spelling, an id alone.
      if (query?.cursor !== undefined) expect(decodeCursor(query.cursor)?.segments).toBe(1);
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(new Set(seen)).toEqual(new Set(seededIds));
  });

  it('links on the host and path the client called: a custom domain with its base path', async () => {
    const event = createPlantsEvent('GET', { query: { limit: '2' } });
    const onCustomDomain = {
      ...event,
      requestContext: {
        ...event.requestContext,
        domainName: 'plants.example.com',
        path: '/v1/plants',
      },
    };
    const response = await listPlants(onCustomDomain, createLambdaContext());
    expect(String(response.headers?.Link)).toMatch(
      /^<https:\/\/plants\.example\.com\/v1\/plants\?limit=2&cursor=[\w-]+>; rel="next"$/,
    );
  });

  it('answers an empty array without a link on an empty table', async () => {
    const empty = await createTestTable();
    try {
      const handler = createHandler({
        documentClient: empty.documentClient,
        tableName: empty.tableName,
        logger: createLogger({}, () => {}),
      });
      const response = await handler(createPlantsEvent('GET'), createLambdaContext());
      expect(response).toMatchObject({ statusCode: 200, body: '[]' });
      expect(response.headers?.Link).toBeUndefined();
    } finally {
      await empty.remove();
    }
  });

  it.each([
    ['0'],
    ['101'],
    ['-1'],
    ['1.5'],
    ['1e2'],
    ['abc'],
    [''],
    [' 5'],
    ['5 '],
    ['0x10'],
    ['99999999999999999999'],
  ])('answers 400/40005 naming limit for limit=%j', async (limit) => {
    const response = await list({ limit });
    expect(response.statusCode).toBe(400);
    expect(JSON.parse(response.body)).toEqual({
      error: 40005,
      message: 'Invalid parameter: limit must be an integer from 1 to 100.',
    });
  });

  it('answers 400/40005 when limit or cursor is given twice', async () => {
    const repeated: Record<string, string[]>[] = [
      { limit: ['5', '5'] },
      { cursor: [cursorAt(1n), cursorAt(2n)] },
    ];
    for (const query of repeated) {
      const response = await list(query);
      expect(response.statusCode).toBe(400);
      expect(JSON.parse(response.body)).toMatchObject({ error: 40005 });
      expect(JSON.parse(response.body).message).toMatch(/limit|cursor/);
    }
  });

  it('takes any int64 cursor as a start point, whether or not that plant exists', async () => {
    for (const id of [int64Min, -5n, 3n, 123_456_789n, int64Max]) {
      const response = await list({ limit: '5', cursor: cursorAt(id) });
      expect(response.statusCode).toBe(200);
      for (const seenId of idsOf(response)) expect(seededIds).toContain(seenId);
    }
  });

  it('answers a tampered or foreign cursor with 200 from a valid start or 400/40005, never anything else', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string(),
          fc.string({
            unit: fc.constantFrom(
              ...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=+/.'.split(''),
            ),
          }),
          fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map((id) => cursorAt(id)),
          fc.bigInt({ min: int64Min, max: int64Max }).map((id) => `${cursorAt(id)}=`),
          fc.string().map((text) => Buffer.from(text).toString('base64url')),
        ),
        async (cursor) => {
          const response = await list({ cursor });
          expect([200, 400]).toContain(response.statusCode);
          if (response.statusCode === 400) {
            expect(JSON.parse(response.body)).toEqual({
              error: 40005,
              message: 'Invalid parameter: cursor must be copied unchanged from a next link.',
            });
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('GET /plants, limit with leading zeros (one rule, as for ids)', () => {
  it.each([
    ['0001', 1],
    ['007', 7],
    ['0100', 100],
    [`${'0'.repeat(5000)}20`, 20],
  ])('reads limit=%j as %i', async (limit, expected) => {
    const response = await list({ limit });
    expect(response.statusCode).toBe(200);
    expect(idsOf(response)).toHaveLength(expected);
  });

  it.each([['0000'], ['0101']])('still answers 400/40005 for limit=%j', async (limit) => {
    expect((await list({ limit })).statusCode).toBe(400);
  });
});

describe('GET /plants over stored items that are not plants', () => {
  it('skips them on every page, logs and counts them, and never stalls a walk', async () => {
    const other = await createTestTable();
    const lines: Record<string, unknown>[] = [];
    const handler = createHandler({
      documentClient: other.documentClient,
      tableName: other.tableName,
      logger: createLogger({}, (line) => lines.push(JSON.parse(line))),
    });
    try {
      // Written by another tool: an id that is no int64, a name or tag of the wrong type.
      const notPlants = [
        { id: 1.5, name: 'fraction' },
        { id: 10n ** 30n, name: 'too big' },
        { id: 3n, name: 7 },
        { id: 4n, name: 'tag', tag: 8 },
        { id: 5n },
      ];
      for (const item of notPlants) {
        await other.documentClient.send(new PutCommand({ TableName: other.tableName, Item: item }));
      }
      const plants = [10n, 11n, 12n];
      for (const id of plants) {
        await other.documentClient.send(
          new PutCommand({ TableName: other.tableName, Item: { id, name: `Plant ${id}` } }),
        );
      }
      for (const limit of [1, 2, 100]) {
        const seen: bigint[] = [];
        let query: Record<string, string> | undefined = { limit: String(limit) };
        for (let pages = 0; query !== undefined; pages += 1) {
          expect(pages).toBeLessThan(10);
          const response = await handler(
            createPlantsEvent('GET', { query }),
            createLambdaContext(),
          );
          expect(response.statusCode).toBe(200);
          seen.push(...idsOf(response));
          query = nextQuery(response);
        }
        expect(seen.sort()).toEqual(plants);
      }
      const warned = lines.filter((line) => line.message === itemsNotPlantsLog.message);
      expect(warned.every((line) => line.level === 'warn')).toBe(true);
      // Each walk meets every one of them once at least (some twice, a page re-reading it).
      expect(
        warned.reduce((sum, line) => sum + Number(line[itemsNotPlantsLog.countField]), 0),
      ).toBeGreaterThanOrEqual(3 * notPlants.length);
    } finally {
      await other.remove();
    }
  });
});
