/**
 * Properties over generated requests, against DynamoDB Local: whatever the body, the answer is a
 * Plant or the Error body, never a fault; and every Plant answered is the plant stored.
 *
 * @services dynamodb-local
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { APIGatewayProxyResult } from 'aws-lambda';
import fc from 'fast-check';
import { createHandler } from '../../../functions/create-plant/create-handler.ts';
import { int64Max, int64Min } from '../../../functions/shared/http/int64-json.ts';
import {
  createLambdaContext,
  createPostPlantsEvent,
  stringifyWithBigInts,
} from '../../support/api-gateway-event.ts';
import { captureLogs } from '../../support/log-capture.ts';
import { createTestTable, type TestTable } from '../../support/test-store.ts';
import { anyTraceresponse } from '../../support/trace.ts';

const numRuns = 200;

let table: TestTable;
let handle: ReturnType<typeof createHandler>;

beforeAll(async () => {
  table = await createTestTable();
  handle = createHandler({
    documentClient: table.documentClient,
    tableName: table.tableName,
    logger: captureLogs().logger,
  });
});

afterAll(async () => {
  await table.remove();
});

function post(body: string): Promise<APIGatewayProxyResult> {
  return handle(createPostPlantsEvent({ body }), createLambdaContext());
}

function expectPlantOrClientError(response: APIGatewayProxyResult) {
  expect([200, 400]).toContain(response.statusCode);
  expect(response.headers).toEqual({
    'Content-Type': 'application/json',
    'X-Content-Type-Options': 'nosniff',
    traceresponse: anyTraceresponse,
    ...(response.statusCode === 200
      ? { ETag: expect.stringMatching(/^"[1-9][0-9]*"$/), 'Cache-Control': 'private, no-cache' }
      : { 'Cache-Control': 'no-store' }),
  });
  const body = JSON.parse(response.body);
  if (response.statusCode === 200) {
    expect(typeof body.name).toBe('string');
    expect(Object.keys(body).every((key) => key === 'name' || key === 'tag')).toBe(true);
  } else {
    expect(Object.keys(body).sort()).toEqual(['error', 'message']);
    expect([40001, 40002, 40004, 40009]).toContain(body.error);
  }
}

/** A few ids so that repeats and conflicts happen, plus the int64 edges and beyond. */
const idValue = fc.oneof(
  fc.constantFrom(1n, 2n, 3n, int64Max, int64Min, int64Max + 1n, int64Min - 1n),
  fc.bigInt({ min: int64Min, max: int64Max }),
  fc.double(),
  fc.string(),
  fc.constant(null),
);

/** Bodies shaped like a NewPlant, right or wrong in every field. */
const plantLikeBody = fc.record(
  {
    id: idValue,
    name: fc.oneof(fc.string(), fc.integer(), fc.constant(null)),
    tag: fc.oneof(fc.string(), fc.constant(null), fc.boolean()),
    extra: fc.jsonValue(),
  },
  { requiredKeys: [] },
);

describe('POST /plants properties', () => {
  it('answers any body with a Plant or the Error body, never a fault', async () => {
    const body = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.json({ maxDepth: 3 }),
      plantLikeBody.map(stringifyWithBigInts),
    );
    await fc.assert(
      fc.asyncProperty(body, async (text) => {
        expectPlantOrClientError(await post(text));
      }),
      { numRuns },
    );
  });

  it('stores exactly the plant it answers 200 for', async () => {
    const validPlant = fc.record(
      {
        id: fc.oneof(
          fc.bigInt({ min: int64Min, max: int64Max }),
          fc.constantFrom(int64Max, int64Min, 4n),
        ),
        name: fc.string(),
        tag: fc.string(),
      },
      { requiredKeys: ['id', 'name'] },
    );
    await fc.assert(
      fc.asyncProperty(validPlant, async (plant) => {
        const response = await post(stringifyWithBigInts(plant));
        expectPlantOrClientError(response);
        const stored = await table.getItem(plant.id);
        expect(String(stored?.id)).toBe(plant.id.toString());
        const storedPlant = {
          name: stored?.name,
          ...(stored?.tag === undefined ? {} : { tag: stored.tag }),
        };
        if (response.statusCode === 200) {
          expect(JSON.parse(response.body)).toEqual(storedPlant);
          expect(JSON.parse(response.body)).toEqual({
            name: plant.name,
            ...(plant.tag === undefined ? {} : { tag: plant.tag }),
          });
        } else {
          // The only client error a valid plant can get: its id is taken by another plant.
          expect(JSON.parse(response.body).error).toBe(40009);
          expect(storedPlant).not.toEqual({ name: plant.name, tag: plant.tag });
        }
      }),
      { numRuns },
    );
  });
});
