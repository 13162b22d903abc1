/**
 * GET and DELETE /plants/{id} on DynamoDB Local through the real handlers: read-after-write,
 * 404/40401, delete idempotency and re-creation, and every id a client may put in the path.
 *
 * @services dynamodb-local
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHandler as createCreateHandler } from '../../../functions/create-plant/create-handler.ts';
import { createHandler as createDeleteHandler } from '../../../functions/delete-plant/create-handler.ts';
import { createHandler as createGetHandler } from '../../../functions/get-plant/create-handler.ts';
import { itemsNotPlantsLog } from '../../../functions/shared/plants/stored-plant.ts';
import { createLogger } from '../../../functions/shared/platform/logger.ts';
import {
  createLambdaContext,
  createPlantsEvent,
  createPostPlantsEvent,
} from '../../support/api-gateway-event.ts';
import { createTestTable, type TestTable } from '../../support/test-store.ts';
import { anyTraceresponse } from '../../support/trace.ts';

let table: TestTable;
let handlers: {
  create: ReturnType<typeof createCreateHandler>;
  get: ReturnType<typeof createGetHandler>;
  remove: ReturnType<typeof createDeleteHandler>;
};

const create = (body: string) =>
  handlers.create(createPostPlantsEvent({ body }), createLambdaContext());
const get = (id: string) => handlers.get(createPlantsEvent('GET', { id }), createLambdaContext());
const remove = (id: string) =>
  handlers.remove(createPlantsEvent('DELETE', { id }), createLambdaContext());

beforeAll(async () => {
  table = await createTestTable();
  const dependencies = {
    documentClient: table.documentClient,
    tableName: table.tableName,
    logger: createLogger({}, () => {}),
  };
  handlers = {
    create: createCreateHandler(dependencies),
    get: createGetHandler(dependencies),
    remove: createDeleteHandler(dependencies),
  };
});

afterAll(async () => {
  await table?.remove();
});

describe('GET /plants/{id}', () => {
  it('reads a plant acknowledged by POST at once, its id exact, the tag only when present', async () => {
    const cases: [id: string, body: string, stored: string][] = [
      [
        '9223372036854775807',
        '{"id":9223372036854775807,"name":"Max","tag":"edge"}',
        '{"id":9223372036854775807,"name":"Max","tag":"edge"}',
      ],
      [
        '-9223372036854775808',
        '{"id":-9223372036854775808,"name":"Min"}',
        '{"id":-9223372036854775808,"name":"Min"}',
      ],
      [
        '9007199254740993',
        '{"id":9007199254740993,"name":"2^53+1"}',
        '{"id":9007199254740993,"name":"2^53+1"}',
      ],
      ['7', '{"id":7e0,"name":"Seven","extra":true}', '{"id":7,"name":"Seven"}'],
    ];
    for (const [id, body, stored] of cases) {
      expect((await create(body)).statusCode).toBe(200);
      expect(await get(id)).toEqual({
        statusCode: 200,
        headers: {
          'Content-Type': 'application/json',
          ETag: expect.stringMatching(/^"[0-9]+"$/),
          'X-Content-Type-Options': 'nosniff',
          traceresponse: anyTraceresponse,
          'Cache-Control': 'private, no-cache',
        },
        body: stored,
      });
    }
  });

  it('reads leading zeros and -0 as the same id', async () => {
    expect((await get('007')).body).toBe('{"id":7,"name":"Seven"}');
    expect((await create('{"id":0,"name":"Zero"}')).statusCode).toBe(200);
    expect((await get('-0')).body).toBe('{"id":0,"name":"Zero"}');
  });

  it('answers 404/40401 for an id whose stored item is not a plant, logging and counting it', async () => {
    await table.documentClient.send(
      new PutCommand({ TableName: table.tableName, Item: { id: 515n, name: 515 } }),
    );
    const lines: Record<string, unknown>[] = [];
    const getWithLog = createGetHandler({
      documentClient: table.documentClient,
      tableName: table.tableName,
      logger: createLogger({}, (line) => lines.push(JSON.parse(line))),
    });
    const response = await getWithLog(
      createPlantsEvent('GET', { id: '515' }),
      createLambdaContext(),
    );
    expect(response.statusCode).toBe(404);
    expect(JSON.parse(response.body)).toEqual({ error: 40401, message: 'No plant with this id.' });
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 'warn', message: itemsNotPlantsLog.message }),
    );
  });

  it('answers 404/40401 for an id no plant has', async () => {
    const response = await get('424242');
    expect(response.statusCode).toBe(404);
    expect(JSON.parse(response.body)).toEqual({ error: 40401, message: 'No plant with this id.' });
  });

  it.each([
    'abc',
    '1.0',
    '1e3',
    '+1',
    ' 1',
    '1 ',
    '--1',
    '',
    '%31',
    '9223372036854775808',
    '-9223372036854775809',
    '1'.repeat(5_000),
    `${'0'.repeat(5_000)}x`,
  ])('answers 400/40005 naming id for %j', async (id) => {
    for (const response of [await get(id), await remove(id)]) {
      expect(response.statusCode).toBe(400);
      expect(JSON.parse(response.body)).toEqual({
        error: 40005,
        message:
          'Invalid parameter: id must be an integer from -9223372036854775808 to 9223372036854775807.',
      });
    }
  });
});

describe('DELETE /plants/{id}', () => {
  it('answers 204 with no body, again for a repeat, and the plant is gone for the next read', async () => {
    expect((await create('{"id":55,"name":"Basil"}')).statusCode).toBe(200);
    for (let attempt = 0; attempt < 2; attempt++) {
      expect(await remove('55')).toEqual({
        statusCode: 204,
        headers: {
          'X-Content-Type-Options': 'nosniff',
          traceresponse: anyTraceresponse,
          'Cache-Control': 'no-store',
        },
        body: '',
      });
    }
    expect((await get('55')).statusCode).toBe(404);
    expect(await table.getItem(55n)).toBeUndefined();
  });

  it('answers 204 for an id that never existed', async () => {
    expect((await remove('-424242')).statusCode).toBe(204);
  });

  it('lets the id be created again, with other content', async () => {
    expect((await create('{"id":56,"name":"Mint"}')).statusCode).toBe(200);
    expect((await remove('56')).statusCode).toBe(204);
    expect((await create('{"id":56,"name":"Sage","tag":"new"}')).statusCode).toBe(200);
    expect((await get('56')).body).toBe('{"id":56,"name":"Sage","tag":"new"}');
  });
});
