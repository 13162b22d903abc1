/**
 * moto's server (an AWS emulator: SQS, S3, Secrets Manager, KMS) as a child process on 127.0.0.1 and a
 * free port, for the deployed webhook path's test bed. Like DynamoDB Local, it runs under a small
 * `sh` guard whose stdin is a pipe from this process: however this process ends, the pipe closes
 * and the guard stops the server, so no test leaves one running.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { KMSClient } from '@aws-sdk/client-kms';
import { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import { findPythonTool } from './python-tools.ts';

export interface MotoServer {
  /** `http://127.0.0.1:<port>`: every emulated service. */
  readonly url: string;
  /** Clients of the emulated services, with test credentials. */
  readonly sqs: SQSClient;
  readonly s3: S3Client;
  readonly secretsManager: SecretsManagerClient;
  readonly kms: KMSClient;
  /** The region the clients use, as Lambda events name it. */
  readonly region: string;
  /** Stops the server and waits until it has exited. */
  stop(): Promise<void>;
}

const guardScript = `
"$@" >/dev/null 2>&1 </dev/null &
child=$!
trap 'kill "$child" 2>/dev/null; wait "$child"; exit 0' TERM INT HUP
read -r _
kill "$child" 2>/dev/null
wait "$child"
`;

/** moto's server with the races of its SQS fixed (`moto_server.py` says which). */
const launcher = path.join(import.meta.dirname, 'moto_server.py');

/**
 * Starts moto's server on `host` (127.0.0.1; `sam local`'s containers need the Docker bridge's
 * gateway); rejects (with how to install it) when there is none.
 */
export async function startMotoServer(host = '127.0.0.1'): Promise<MotoServer> {
  findPythonTool('moto_server');
  const python = findPythonTool('python');
  const port = await freePort(host);
  const guard: ChildProcess = spawn(
    'sh',
    ['-c', guardScript, 'moto-guard', python, launcher, '-H', host, '-p', String(port)],
    { stdio: ['pipe', 'ignore', 'ignore'] },
  );
  const exited = new Promise<void>((resolve) => guard.once('exit', () => resolve()));
  const endpoint = `http://${host}:${port}`;
  const stop = async () => {
    guard.stdin?.end();
    await exited;
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const response = await fetch(`${endpoint}/moto-api/`);
      await response.body?.cancel();
      if (response.ok) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline || guard.exitCode !== null) {
      await stop();
      throw new Error(`moto_server did not answer on ${endpoint} within 30 s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const region = 'us-east-1';
  const settings = {
    endpoint,
    region,
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
  };
  const sqs = new SQSClient(settings);
  const s3 = new S3Client({ ...settings, forcePathStyle: true });
  const secretsManager = new SecretsManagerClient(settings);
  const kms = new KMSClient(settings);
  return {
    url: endpoint,
    sqs,
    s3,
    secretsManager,
    kms,
    region,
    stop: async () => {
      for (const client of [sqs, s3, secretsManager, kms]) client.destroy();
      await stop();
    },
  };
}

function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null
          ? resolve(address.port)
          : reject(new Error('no free port')),
      );
    });
  });
}
