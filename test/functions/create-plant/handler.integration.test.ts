/**
 * create-plant's handler against DynamoDB Local: every answer of `POST /plants`.
 *
 * @services dynamodb-local
 */
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { createHandler } from '../../../functions/create-plant/create-handler.ts';
import { errorCodes, maxBodyBytes } from '../../../functions/shared/errors/error-codes.ts';
import {
  createLambdaContext,
  createPostPlantsEvent,
  type ProxyEventOptions,
} from '../../support/api-gateway-event.ts';
import { type CapturedLogs, captureLogs } from '../../support/log-capture.ts';
import { createTestTable, type TestTable } from '../../support/test-store.ts';
import { anyTraceresponse } from '../../support/trace.ts';

const int64Max = '9223372036854775807';
const int64Min = '-9223372036854775808';
const idRequirement = `an integer from ${int64Min} to ${int64Max}`;

let table: TestTable;
let logs: CapturedLogs;
let handle: ReturnType<typeof createHandler>;
let nextId = 1000;

beforeAll(async () => {
  table = await createTestTable();
  logs = captureLogs();
  handle = createHandler({
    documentClient: table.documentClient,
    tableName: table.tableName,
    logger: logs.logger,
  });
});

afterAll(async () => {
  await table.remove();
});

async function post(options: ProxyEventOptions): Promise<APIGatewayProxyResult> {
  return handle(createPostPlantsEvent(options), createLambdaContext());
}

/** A JSON body with `id` written exactly as given (the source text matters). */
function bodyWithId(idSource: string, rest = '"name":"Fern"'): string {
  return `{"id":${idSource},${rest}}`;
}

function uniqueId(): number {
  nextId += 1;
  return nextId;
}

function expectError(response: APIGatewayProxyResult, code: { error: number; statusCode: number }) {
  expect(response.statusCode).toBe(code.statusCode);
  expect(response.headers).toEqual({
    'Content-Type': 'application/json',
    'X-Content-Type-Options': 'nosniff',
    traceresponse: anyTraceresponse,
    'Cache-Control': 'no-store',
  });
  const body = JSON.parse(response.body);
  expect(Object.keys(body).sort()).toEqual(['error', 'message']);
  expect(body.error).toBe(code.error);
  expect(typeof body.message).toBe('string');
  return body as { error: number; message: string };
}

describe('POST /plants: success', () => {
  it('answers 200 with exactly name and tag, and stores the plant', async () => {
    const id = uniqueId();
    const response = await post({ body: { id, name: 'Monstera', tag: 'tropical' } });
    expect(response.statusCode).toBe(200);
    expect(response.headers).toEqual({
      'Content-Type': 'application/json',
      ETag: expect.stringMatching(/^"[1-9][0-9]*"$/),
      'X-Content-Type-Options': 'nosniff',
      traceresponse: anyTraceresponse,
      'Cache-Control': 'private, no-cache',
    });
    expect(JSON.parse(response.body)).toEqual({ name: 'Monstera', tag: 'tropical' });
    const item = await table.getItem(BigInt(id));
    expect(item).toMatchObject({ name: 'Monstera', tag: 'tropical' });
    expect(String(item?.id)).toBe(String(id));
  });

  it('omits tag from the answer and the item when the plant has none', async () => {
    const id = uniqueId();
    const response = await post({ body: { id, name: 'Cactus' } });
    expect(response.statusCode).toBe(200);
    expect(response.body).toBe('{"name":"Cactus"}');
    expect(Object.keys((await table.getItem(BigInt(id))) ?? {}).sort()).toEqual([
      'id',
      'name',
      'traceparent',
      'version',
    ]);
  });

  it('never stores undeclared fields, __proto__ and constructor included', async () => {
    const id = uniqueId();
    const body = `{"id":${id},"name":"Ivy","admin":true,"__proto__":{"polluted":1},"constructor":{"prototype":{"x":1}},"nested":{"id":5}}`;
    const response = await post({ body });
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ name: 'Ivy' });
    expect(Object.keys((await table.getItem(BigInt(id))) ?? {}).sort()).toEqual([
      'id',
      'name',
      'traceparent',
      'version',
    ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('accepts application/json with parameters and any header or media type case', async () => {
    for (const [name, value] of [
      ['content-type', 'application/json; charset=utf-8'],
      ['CONTENT-TYPE', 'Application/JSON'],
      ['Content-Type', ' application/json ;charset=UTF-8'],
    ] as const) {
      const response = await post({
        headers: { [name]: value },
        body: { id: uniqueId(), name: 'a' },
      });
      expect(response.statusCode).toBe(200);
    }
  });

  it('decodes a base64-encoded body', async () => {
    const body = Buffer.from(JSON.stringify({ id: uniqueId(), name: 'Basil' })).toString('base64');
    const response = await post({ body, isBase64Encoded: true });
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ name: 'Basil' });
  });
});

describe('POST /plants: the int64 id is kept exactly', () => {
  it.each([
    [int64Max, int64Max],
    [int64Min, int64Min],
    ['9007199254740993', '9007199254740993'], // 2^53 + 1: JSON.parse alone would round it
    ['-0', '0'],
    ['7.0', '7'],
    ['7e2', '700'],
    ['7E+2', '700'],
    ['700e-2', '7'],
    ['9.223372036854775807e18', int64Max],
    ['0e99999', '0'],
    ['0.000', '0'],
  ])('stores id %s as %s', async (idSource, stored) => {
    // Several sources name the same id: start each case from an empty slot.
    await table.documentClient.send(
      new DeleteCommand({ TableName: table.tableName, Key: { id: BigInt(stored) } }),
    );
    const response = await post({ body: bodyWithId(idSource, `"name":"edge ${idSource}"`) });
    expect(response.statusCode).toBe(200);
    const item = await table.getItem(stored);
    expect(item?.name).toBe(`edge ${idSource}`);
    expect(String(item?.id)).toBe(stored);
  });

  it.each([
    ['9223372036854775808', '2^63'],
    ['-9223372036854775809', '-2^63 - 1'],
    ['1e19', '10^19'],
    ['1e999999999', 'a huge exponent'],
    ['7.5', 'a fraction'],
    ['1e-1', 'a negative exponent'],
    ['123456789012345678901234567890', 'thirty digits'],
    ['"7"', 'a string'],
    ['true', 'a boolean'],
    ['null', 'null'],
    ['[7]', 'an array'],
    ['{"id":7}', 'an object'],
  ])('answers 400/40002 for id %s (%s)', async (idSource) => {
    const body = expectError(await post({ body: bodyWithId(idSource) }), errorCodes.invalidPlant);
    expect(body.message).toBe(`Invalid plant: id must be ${idRequirement}.`);
  });
});

describe('POST /plants: every failure answers exactly {error, message}', () => {
  it.each([
    ['missing', undefined],
    ['text/plain', { 'Content-Type': 'text/plain' }],
    ['application/jsonx', { 'Content-Type': 'application/jsonx' }],
    ['application/x-www-form-urlencoded', { 'Content-Type': 'application/x-www-form-urlencoded' }],
  ])('answers 400/40003 when the content type is %s', async (_name, headers) => {
    const event = createPostPlantsEvent({ body: { id: 1, name: 'a' } });
    if (headers === undefined) delete event.headers['Content-Type'];
    else event.headers['Content-Type'] = headers['Content-Type'];
    expectError(await handle(event, createLambdaContext()), errorCodes.unsupportedMediaType);
  });

  it('checks the content type before the size', async () => {
    const event = createPostPlantsEvent({
      headers: { 'Content-Type': 'text/plain' },
      body: 'x'.repeat(maxBodyBytes + 1),
    });
    expectError(await handle(event, createLambdaContext()), errorCodes.unsupportedMediaType);
  });

  it('answers 400/40004 when the body is one byte over 16 KiB, even if it is invalid JSON', async () => {
    expectError(await post({ body: 'x'.repeat(maxBodyBytes + 1) }), errorCodes.bodyTooLarge);
  });

  it('counts the size in UTF-8 bytes, not characters', async () => {
    const name = 'é'.repeat(maxBodyBytes / 2); // 2 bytes each: the body exceeds 16384 bytes
    expectError(await post({ body: { id: 1, name } }), errorCodes.bodyTooLarge);
  });

  it('counts the decoded size of a base64 body', async () => {
    const raw = JSON.stringify({ id: uniqueId(), name: 'n'.repeat(maxBodyBytes - 100) });
    const accepted = await post({
      body: Buffer.from(raw).toString('base64'),
      isBase64Encoded: true,
    });
    expect(accepted.statusCode).toBe(200);
    const tooLarge = Buffer.from(`${raw}${' '.repeat(200)}`).toString('base64');
    expectError(await post({ body: tooLarge, isBase64Encoded: true }), errorCodes.bodyTooLarge);
  });

  it('accepts a body of exactly 16384 bytes', async () => {
    const prefix = `{"id":${uniqueId()},"name":"`;
    const body = `${prefix}${'n'.repeat(maxBodyBytes - prefix.length - 2)}"}`;
    expect(Buffer.byteLength(body)).toBe(maxBodyBytes);
    expect((await post({ body })).statusCode).toBe(200);
  });

  it.each([
    ['empty', ''],
    ['absent', null],
    ['truncated', '{"id": 1, "name": "a"'],
    ['not JSON', 'id=1&name=a'],
    ['trailing garbage', '{"id":1,"name":"a"} x'],
  ])('answers 400/40001 when the body is %s', async (_name, body) => {
    expectError(await post({ body }), errorCodes.invalidJson);
  });

  it('answers 400/40001 when the body is not UTF-8', async () => {
    const body = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]).toString('base64');
    expectError(await post({ body, isBase64Encoded: true }), errorCodes.invalidJson);
  });

  it('answers 400/40002 when name is missing', async () => {
    const body = expectError(await post({ body: { id: 1 } }), errorCodes.invalidPlant);
    expect(body.message).toBe('Invalid plant: name is required and must be a string.');
  });

  it('answers 400/40002 naming every failing field', async () => {
    const body = expectError(await post({ body: '{"tag":null}' }), errorCodes.invalidPlant);
    expect(body.message).toBe(
      `Invalid plant: id is required and must be ${idRequirement}; name is required and must be a string; tag must be a string when present.`,
    );
  });

  it('answers 400/40002 when tag is not a string, null included', async () => {
    for (const tag of ['null', '5', '["a"]']) {
      const body = expectError(
        await post({ body: bodyWithId('1', `"name":"a","tag":${tag}`) }),
        errorCodes.invalidPlant,
      );
      expect(body.message).toBe('Invalid plant: tag must be a string when present.');
    }
  });

  it.each([
    ['an array', '[]'],
    ['a string', '"plant"'],
    ['a number', '7'],
    ['null', 'null'],
  ])('answers 400/40002 when the body is %s', async (_name, body) => {
    const answer = expectError(await post({ body }), errorCodes.invalidPlant);
    expect(answer.message).toBe('Invalid plant: the body must be a JSON object.');
  });

  it('never echoes the client values in the message', async () => {
    const huge = 'z'.repeat(7_000);
    const answer = expectError(
      await post({ body: `{"id":"${huge}","name":{"${huge}":1}}` }),
      errorCodes.invalidPlant,
    );
    expect(answer.message).not.toContain('zzz');
    expect(answer.message.length).toBeLessThan(300);
  });
});

describe('POST /plants: create is idempotent', () => {
  it('answers 200 with the stored plant when the same plant is sent again', async () => {
    const id = uniqueId();
    const first = await post({ body: { id, name: 'Aloe', tag: 'succulent' } });
    const again = await post({ body: { id, name: 'Aloe', tag: 'succulent', ignored: 1 } });
    expect(again.statusCode).toBe(200);
    expect(again.body).toBe(first.body);
  });

  it('treats 7, 7.0 and 7e0 as the same id', async () => {
    const id = uniqueId();
    expect((await post({ body: bodyWithId(`${id}`) })).statusCode).toBe(200);
    expect((await post({ body: bodyWithId(`${id}.0`) })).statusCode).toBe(200);
    expect((await post({ body: bodyWithId(`${id}e0`) })).statusCode).toBe(200);
    const items = (await table.scanItems()).filter((item) => String(item.id) === String(id));
    expect(items).toHaveLength(1);
  });

  it.each([
    ['another name', { name: 'Rose', tag: 'succulent' }],
    ['another tag', { name: 'Aloe', tag: 'spiky' }],
    ['the tag dropped', { name: 'Aloe' }],
  ])('answers 400/40009 and keeps the stored plant when the repeat has %s', async (_n, change) => {
    const id = uniqueId();
    const original = { name: 'Aloe', tag: 'succulent' };
    expect((await post({ body: { id, ...original } })).statusCode).toBe(200);
    expectError(await post({ body: { id, ...change } }), errorCodes.plantConflict);
    expect(await table.getItem(BigInt(id))).toMatchObject(original);
  });

  it('answers 400/40009 when the repeat adds a tag', async () => {
    const id = uniqueId();
    await post({ body: { id, name: 'Aloe' } });
    expectError(await post({ body: { id, name: 'Aloe', tag: 'new' } }), errorCodes.plantConflict);
  });

  it('stores exactly one item when many creates of one id race', async () => {
    const id = uniqueId();
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, index) =>
        post({ body: { id, name: index % 2 === 0 ? 'Even' : 'Odd' } }),
      ),
    );
    const stored = await table.getItem(BigInt(id));
    const winner = stored?.name;
    expect(['Even', 'Odd']).toContain(winner);
    const winners = responses.filter((response) => response.statusCode === 200);
    const conflicts = responses.filter((response) => response.statusCode === 400);
    expect(winners).toHaveLength(15);
    expect(conflicts).toHaveLength(15);
    for (const response of winners) expect(JSON.parse(response.body)).toEqual({ name: winner });
    for (const response of conflicts) expectError(response, errorCodes.plantConflict);
    const items = (await table.scanItems()).filter((item) => String(item.id) === String(id));
    expect(items).toHaveLength(1);
  });
});

describe('POST /plants: logging', () => {
  it('logs one line per request with the request ids, and never headers, body or token', async () => {
    const before = logs.lines.length;
    const event = createPostPlantsEvent({
      requestId: 'gateway-request-1',
      body: { id: uniqueId(), name: 'secret-plant-name' },
    });
    const context = createLambdaContext();
    await handle(event, context);
    const written = logs.lines.slice(before);
    expect(written).toHaveLength(1);
    expect(JSON.parse(written[0] ?? '')).toMatchObject({
      level: 'info',
      requestId: 'gateway-request-1',
      awsRequestId: context.awsRequestId,
      statusCode: 200,
      durationMilliseconds: expect.any(Number),
    });
    expect(written[0]).not.toMatch(/Bearer|header\.payload|secret-plant-name|Authorization/);
  });

  it('logs the error code of a client error on one info line', async () => {
    const before = logs.lines.length;
    await post({ body: '{', requestId: 'gateway-request-2' });
    const written = logs.entries().slice(before);
    expect(written).toEqual([
      expect.objectContaining({ level: 'info', requestId: 'gateway-request-2', errorCode: 40001 }),
    ]);
  });
});
