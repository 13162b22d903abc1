/**
 * create-plant's Lambda entry as Lambda loads it: its environment read at cold start, then a create.
 *
 * @services dynamodb-local
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from '@jest/globals';
import { readTableFunctionConfig } from '../../../functions/shared/plants/plants-function.ts';
import { createLambdaContext, createPostPlantsEvent } from '../../support/api-gateway-event.ts';
import { createTestTable } from '../../support/test-store.ts';
import { anyTraceresponse } from '../../support/trace.ts';

const run = promisify(execFile);
const handlerPath = fileURLToPath(
  new URL('../../../functions/create-plant/handler.ts', import.meta.url),
);

describe('the create-plant Lambda entry', () => {
  it('fails the cold start with a clear message when TABLE_NAME is missing', async () => {
    const environment = { ...process.env };
    delete environment.TABLE_NAME;
    const started = run(
      process.execPath,
      ['--input-type=module', '-e', `await import(${JSON.stringify(handlerPath)})`],
      {
        env: environment,
      },
    );
    await expect(started).rejects.toMatchObject({
      stderr: expect.stringContaining('TABLE_NAME is required: the plants table.'),
    });
  });

  it('reads the configuration once from the environment', () => {
    expect(readTableFunctionConfig('create-plant', { TABLE_NAME: 'plants-dev' })).toEqual({
      tableName: 'plants-dev',
      dynamoDbUrl: undefined,
      allowedOrigins: [],
    });
    expect(
      readTableFunctionConfig('create-plant', {
        TABLE_NAME: 'plants',
        DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000',
        CORS_ALLOWED_ORIGINS: 'https://app.example.com, http://localhost:5173',
      }),
    ).toEqual({
      tableName: 'plants',
      dynamoDbUrl: 'http://127.0.0.1:8000',
      allowedOrigins: ['https://app.example.com', 'http://localhost:5173'],
    });
    expect(() => readTableFunctionConfig('create-plant', { TABLE_NAME: '' })).toThrow(/TABLE_NAME/);
    expect(() =>
      readTableFunctionConfig('create-plant', {
        TABLE_NAME: 'plants',
        CORS_ALLOWED_ORIGINS: 'https://app.example.com/path',
      }),
    ).toThrow(/CORS_ALLOWED_ORIGINS/);
  });

  it('creates a plant through the exported handler with TABLE_NAME and DYNAMODB_ENDPOINT', async () => {
    const table = await createTestTable();
    try {
      process.env.TABLE_NAME = table.tableName;
      process.env.DYNAMODB_ENDPOINT = table.url;
      const { handler } = await import('../../../functions/create-plant/handler.ts');
      const response = await handler(
        createPostPlantsEvent({ body: '{"id": 9223372036854775807, "name": "Olive"}' }),
        createLambdaContext(),
      );
      expect(response).toEqual({
        statusCode: 200,
        headers: {
          'Content-Type': 'application/json',
          ETag: expect.stringMatching(/^"[1-9][0-9]*"$/),
          'X-Content-Type-Options': 'nosniff',
          traceresponse: anyTraceresponse,
          'Cache-Control': 'private, no-cache',
        },
        body: '{"name":"Olive"}',
      });
      expect((await table.getItem(9223372036854775807n))?.name).toBe('Olive');
    } finally {
      delete process.env.TABLE_NAME;
      delete process.env.DYNAMODB_ENDPOINT;
      await table.remove();
    }
  });
});
