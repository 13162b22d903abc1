/**
 * moto's server (an AWS emulator: SQS, S3, Secrets Manager, KMS, API Gateway) as a child process on 127.0.0.1
 * and a free port, for the deployed webhook path's test bed, under a guard
 * (`guarded-server.ts`): however this process ends, the guard stops the server, so no test leaves
 * one running.
 */
import path from 'node:path';
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { KMSClient } from '@aws-sdk/client-kms';
import { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import { freePort, startGuardedServer } from '../local/guarded-server.ts';
import { findPythonTool } from '../local/python-tools.ts';

export interface MotoServer {
  /** `http://127.0.0.1:<port>`: every emulated service. */
  readonly url: string;
  /** Clients of the emulated services, with test credentials. */
  readonly sqs: SQSClient;
  readonly s3: S3Client;
  readonly secretsManager: SecretsManagerClient;
  readonly kms: KMSClient;
  readonly apiGateway: APIGatewayClient;
  /** The region the clients use, as Lambda events name it. */
  readonly region: string;
  /** Stops the server and waits until it has exited. */
  stop(): Promise<void>;
}

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
  const endpoint = `http://${host}:${port}`;
  const server = await startGuardedServer({
    name: 'moto_server',
    command: [python, launcher, '-H', host, '-p', String(port)],
    healthUrl: `${endpoint}/moto-api/`,
    readyTimeoutMilliseconds: 30_000,
    pollMilliseconds: 100,
  });
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
  const apiGateway = new APIGatewayClient(settings);
  return {
    url: endpoint,
    sqs,
    s3,
    secretsManager,
    kms,
    apiGateway,
    region,
    stop: async () => {
      for (const client of [sqs, s3, secretsManager, kms, apiGateway]) client.destroy();
      await server.stop();
    },
  };
}
