import { spawn } from 'node:child_process';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from '@jest/globals';
import { createDocumentClient } from '../../functions/shared/platform/dynamodb.ts';

import {
  type DynamoDbLocal,
  DynamoDbLocalStartError,
  JavaNotFoundError,
  startDynamoDbLocal,
} from '../../local/dynamodb-local.ts';
import { loadOrCreateStoreCredentials } from '../../local/store-credentials.ts';
import { createPlantsTableIfMissing } from '../../local/tables.ts';
import { isProcessRunning } from '../support/processes.ts';

/** A fresh JVM on a busy machine may take seconds to answer: these tests wait, the API's client does not. */
const patient = { connectionTimeoutMilliseconds: 10_000, requestTimeoutMilliseconds: 30_000 };

const started: DynamoDbLocal[] = [];
const temporaryDirectories: string[] = [];

afterAll(async () => {
  await Promise.all(started.map((store) => store.stop()));
  await Promise.all(
    temporaryDirectories.map((directory) => rm(directory, { recursive: true, force: true })),
  );
});

async function temporaryDirectory(): Promise<string> {
  const directory = await mkdtemp(path.join(tmpdir(), 'plant-store-test-'));
  temporaryDirectories.push(directory);
  return directory;
}

async function waitUntilGone(pid: number, timeoutMilliseconds: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMilliseconds;
  while (Date.now() < deadline) {
    if (!isProcessRunning(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return !isProcessRunning(pid);
}

describe('startDynamoDbLocal', () => {
  it('keeps data in a data directory across a stop and a restart on the same port, even after a pause', async () => {
    const dataDirectory = await temporaryDirectory();
    const first = await startDynamoDbLocal({ dataDirectory });
    started.push(first);
    expect(first.url).toBe(`http://127.0.0.1:${first.port}`);
    const client = createDocumentClient({ url: first.url, ...patient });
    await createPlantsTableIfMissing(client, 'plants');
    await client.send(new PutCommand({ TableName: 'plants', Item: { id: 1n, name: 'Fern' } }));
    client.destroy();

    // A paused store must still stop: the guard resumes it before asking it to exit.
    process.kill(first.pid, 'SIGSTOP');
    await first.stop();
    expect(isProcessRunning(first.pid)).toBe(false);

    const second = await startDynamoDbLocal({ dataDirectory, port: first.port });
    started.push(second);
    const again = createDocumentClient({ url: second.url, ...patient });
    await createPlantsTableIfMissing(again, 'plants');
    const { Item } = await again.send(new GetCommand({ TableName: 'plants', Key: { id: 1n } }));
    again.destroy();
    expect(Item?.name).toBe('Fern');
    await second.stop();
    expect(isProcessRunning(second.pid)).toBe(false);
    // Two JVM starts: well over the default 30 s when the machine is busy with other tiers.
  }, 180_000);

  it('never outlives its parent, even when the parent is killed with SIGKILL', async () => {
    const harness = fileURLToPath(new URL('../../local/dynamodb-local.ts', import.meta.url));
    const script = `const { startDynamoDbLocal } = await import(${JSON.stringify(harness)});
      const store = await startDynamoDbLocal();
      process.stdout.write(String(store.pid) + '\\n');
      setInterval(() => {}, 1000);`;
    const parent = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let jvmPid: number | undefined;
    try {
      jvmPid = await new Promise<number>((resolve, reject) => {
        parent.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
        parent.once('exit', (code) => reject(new Error(`parent exited early (${code})`)));
      });
      expect(isProcessRunning(jvmPid)).toBe(true);
      parent.kill('SIGKILL');
      expect(await waitUntilGone(jvmPid, 5_000)).toBe(true);
    } finally {
      // Clean up even when an assertion failed, so that no JVM outlives the run.
      parent.kill('SIGKILL');
      if (jvmPid !== undefined && isProcessRunning(jvmPid)) process.kill(jvmPid, 'SIGKILL');
    }
  });

  it('explains that a Java runtime is needed when java is missing', async () => {
    const starting = startDynamoDbLocal({ javaCommand: '/nonexistent/bin/java' });
    // Should it start anyway, it must still be stopped after the run.
    starting.then((store) => started.push(store)).catch(() => undefined);
    await expect(starting).rejects.toBeInstanceOf(JavaNotFoundError);
    await expect(starting).rejects.toThrow(/DynamoDB Local needs a Java runtime/);
  });

  it('refuses a named port another server holds, rather than taking its answers for the store', async () => {
    const other = createServer((_request, response) => response.end('{}'));
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = other.address() as AddressInfo;
      const starting = startDynamoDbLocal({ port });
      starting.then((store) => started.push(store)).catch(() => undefined);
      await expect(starting).rejects.toBeInstanceOf(DynamoDbLocalStartError);
      await expect(starting).rejects.toThrow(`Port ${port} is already in use`);
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });
});

describe('the store npm start runs', () => {
  it('keeps its data to the key id in the data folder: another key id, as anyone on the network would send, sees none of it', async () => {
    const directory = await temporaryDirectory();
    const credentials = loadOrCreateStoreCredentials(directory);
    expect(statSync(path.join(directory, 'access-key-id')).mode & 0o777).toBe(0o600);
    expect(loadOrCreateStoreCredentials(directory)).toEqual(credentials);
    const store = await startDynamoDbLocal({
      dataDirectory: directory,
      privateAccessKeyId: credentials.accessKeyId,
    });
    started.push(store);
    const owner = createDocumentClient({ url: store.url, credentials, ...patient });
    const stranger = createDocumentClient({
      url: store.url,
      ...patient,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    try {
      await createPlantsTableIfMissing(owner, 'plants');
      await owner.send(new PutCommand({ TableName: 'plants', Item: { id: 1n, name: 'Fern' } }));
      const { TableNames } = await stranger.send(new ListTablesCommand({}));
      expect(TableNames).toEqual([]);
      await expect(
        stranger.send(new PutCommand({ TableName: 'plants', Item: { id: 2, name: 'x' } })),
      ).rejects.toThrow(/non-existent table/);
      const { Item } = await owner.send(new GetCommand({ TableName: 'plants', Key: { id: 1n } }));
      expect(Item?.name).toBe('Fern');
    } finally {
      owner.destroy();
      stranger.destroy();
    }
  });

  it('moves a shared database from before the store was private to the key id, once', async () => {
    const directory = await temporaryDirectory();
    writeFileSync(path.join(directory, 'shared-local-instance.db'), 'plants');
    const { accessKeyId } = loadOrCreateStoreCredentials(directory);
    expect(readdirSync(directory).sort()).toEqual(
      ['access-key-id', `${accessKeyId}_us-east-1.db`].sort(),
    );
  });
});
