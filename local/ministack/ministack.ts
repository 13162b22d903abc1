/**
 * MiniStack (PyPI `ministack`, an AWS emulator on one port) as a child process, for the tier that
 * deploys the stack with the CDK CLI: on 127.0.0.1 and a free port, its state under a folder the
 * caller names, its functions run as host processes by the first `node` on `PATH` (Node.js 24,
 * the runtime the functions declare, from `node_modules/.bin`). Like moto, it runs under a guard
 * (`guarded-server.ts`), so however this process ends, MiniStack is stopped (SIGTERM: it ends its
 * function workers too).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  CloudFormationClient,
  ListStackResourcesCommand,
  type StackResourceSummary,
} from '@aws-sdk/client-cloudformation';
import { repositoryRoot } from '../../infra/plant-store-function.ts';
import { freePort, startGuardedServer } from '../guarded-server.ts';
import { findPythonTool } from '../python-tools.ts';
import { type CallRecorder, startCallRecorder } from './aws-call-recorder.ts';

export interface MiniStack {
  /** `http://127.0.0.1:<port>`: every service, as `AWS_ENDPOINT_URL`. */
  readonly url: string;
  readonly port: number;
  /** The emulated account and region the stack deploys to. */
  readonly account: string;
  readonly region: string;
  /** The environment a client of the emulator needs (endpoint, test credentials, region). */
  readonly clientEnvironment: Readonly<Record<string, string>>;
  /**
   * The recorder in front of MiniStack, when `PLANT_STORE_AWS_CALLS` names a file to record the
   * calls in (the permissions tier: docs/testing.md); the operator's calls are `clientEnvironment`'s.
   */
  readonly recorder?: CallRecorder;
  /** What MiniStack printed (the last lines are kept). */
  output(): string;
  /** Stops MiniStack and waits until it has exited. */
  stop(): Promise<void>;
}

/** Starts MiniStack with its state in `stateDirectory`; rejects (with how to get it) without it. */
export async function startMiniStack(stateDirectory: string): Promise<MiniStack> {
  const python = findPythonTool('ministack-python');
  const port = await freePort();
  const region = 'us-east-1';
  const account = '000000000000';
  const recordTo = process.env.PLANT_STORE_AWS_CALLS;
  const recorder =
    recordTo === undefined || recordTo === ''
      ? undefined
      : await startCallRecorder({
          upstream: `http://127.0.0.1:${port}`,
          file: recordTo,
          region,
          account,
        });
  mkdirSync(path.join(stateDirectory, 'tmp'), { recursive: true, mode: 0o700 });
  const environment: Record<string, string> = {
    ...(process.env as Record<string, string>),
    GATEWAY_PORT: String(port),
    // Every listener on loopback: its gateway, and neither IoT's MQTT (0.0.0.0:8883 unless off)
    // nor an SFTP server.
    BIND_HOST: '127.0.0.1',
    IOT_MTLS_ENABLED: '0',
    SFTP_HOST: '127.0.0.1',
    STATE_DIR: stateDirectory,
    S3_DATA_DIR: path.join(stateDirectory, 's3'),
    TMPDIR: path.join(stateDirectory, 'tmp'),
    LAMBDA_EXECUTOR: 'local',
    // The functions run with the first `node` on PATH: the runtime's major, not the machine's.
    PATH: `${path.join(repositoryRoot, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`,
    // Where the functions call back: through the recorder, when there is one.
    ...(recorder === undefined ? {} : { AWS_ENDPOINT_URL: recorder.url }),
  };
  const endpoint = `http://127.0.0.1:${port}`;
  const server = await startGuardedServer({
    name: 'MiniStack',
    command: [python, '-m', 'ministack'],
    environment,
    healthUrl: `${endpoint}/_ministack/health`,
    readyTimeoutMilliseconds: 60_000,
    pollMilliseconds: 200,
    keepOutput: true,
  });
  const url = recorder?.url ?? endpoint;
  return {
    url,
    port: Number(new URL(url).port),
    account,
    region,
    clientEnvironment: {
      AWS_ENDPOINT_URL: url,
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_REGION: region,
      AWS_DEFAULT_REGION: region,
    },
    ...(recorder === undefined ? {} : { recorder }),
    output: server.output,
    stop: async () => {
      await server.stop();
      await recorder?.stop();
    },
  };
}

/** What the permissions tier needs of a deployed stack: its template and physical resources. */
export interface RecordedStack {
  readonly stackName: string;
  readonly template: unknown;
  readonly resources: readonly StackResourceSummary[];
}

/** Writes `stackName`'s template (as deployed) and resources beside the recorded calls. */
export async function recordStack(
  ministack: MiniStack,
  stackName: string,
  template: unknown,
): Promise<void> {
  const recordTo = process.env.PLANT_STORE_AWS_CALLS;
  if (ministack.recorder === undefined || recordTo === undefined) return;
  const cloudFormation = new CloudFormationClient({
    endpoint: ministack.url,
    region: ministack.region,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  const resources: StackResourceSummary[] = [];
  try {
    let next: string | undefined;
    do {
      const page = await cloudFormation.send(
        new ListStackResourcesCommand({ StackName: stackName, NextToken: next }),
      );
      resources.push(...(page.StackResourceSummaries ?? []));
      next = page.NextToken;
    } while (next !== undefined);
  } finally {
    cloudFormation.destroy();
  }
  const recorded: RecordedStack = { stackName, template, resources };
  writeFileSync(`${recordTo}.${stackName}.stack.json`, JSON.stringify(recorded));
}
