/**
 * A client changing plants through the local API (gateway stand-in, authorizer, the functions,
 * DynamoDB Local), every answer checked against openapi.yaml: started before a test file's tests
 * and stopped after.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from '@jest/globals';
import { createLogger } from '../../functions/shared/platform/logger.ts';
import { type LocalApi, startLocalApi } from '../../local/local-api.ts';
import { createTestTable, type TestTable } from '../support/test-store.ts';
import { expectDocumentedResponse } from './openapi.ts';

export interface Answer {
  readonly status: number;
  readonly etag: string | null;
  readonly body: unknown;
}

/** Starts the API for the file; the returned client's calls check every answer. */
export function usePlantChangeClient() {
  let keysDirectory: string | undefined;
  let api: LocalApi | undefined;
  let table: TestTable | undefined;
  let token = '';
  let nextId = 1000;

  beforeAll(async () => {
    keysDirectory = await mkdtemp(join(tmpdir(), 'plant-store-conditional-keys-'));
    table = await createTestTable();
    api = await startLocalApi({
      port: 0,
      dynamoDbUrl: table.url,
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
    if (keysDirectory !== undefined) await rm(keysDirectory, { recursive: true, force: true });
  });

  const started = () => {
    if (api === undefined || table === undefined) throw new Error('the API has not started');
    return { api, table };
  };

  /** Sends a request with the token and checks the answer against openapi.yaml. */
  async function call(
    operationId: string,
    method: string,
    path: string,
    options: { body?: string; headers?: Record<string, string> } = {},
  ): Promise<Answer> {
    const response = await fetch(`${started().api.url}${path}`, {
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

  return {
    /** The running API (its `url`). */
    api: () => started().api,
    token: () => token,
    call,
    put: (id: bigint | number, body: string, ifMatch?: string) =>
      call('replacePlant', 'PUT', `/plants/${id}`, {
        body,
        headers: ifMatch === undefined ? {} : { 'If-Match': ifMatch },
      }),
    patch: (id: bigint | number, body: string, ifMatch?: string, contentType?: string) =>
      call('patchPlant', 'PATCH', `/plants/${id}`, {
        body,
        headers: {
          'Content-Type': contentType ?? 'application/merge-patch+json',
          ...(ifMatch === undefined ? {} : { 'If-Match': ifMatch }),
        },
      }),
    get: (id: bigint | number, ifNoneMatch?: string) =>
      call('getPlant', 'GET', `/plants/${id}`, {
        headers: ifNoneMatch === undefined ? {} : { 'If-None-Match': ifNoneMatch },
      }),
    /** Creates a new plant and answers its id and ETag. */
    createPlant: async (name = 'Monstera', tag: string | null = 'tropical') => {
      nextId += 1;
      const id = nextId;
      const body = JSON.stringify(tag === null ? { id, name } : { id, name, tag });
      const created = await call('createPlant', 'POST', '/plants', { body });
      expect(created.status).toBe(200);
      return { id, etag: created.etag as string };
    },
    /** The item as stored, or undefined. */
    storedItem: async (id: number) =>
      (await started().table.scanItems()).find((item) => String(item.id) === String(id)),
  };
}
