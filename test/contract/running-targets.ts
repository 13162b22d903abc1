/**
 * The targets the contract suite starts itself: `npm start` as a developer runs it, and `sam
 * local start-api` as the SAM recipe runs it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { figures, type SamApi, startSamApi, startSamBed } from '../sam/sam-bed.ts';
import type { TargetDescription } from './target.ts';

/** A target the suite started, and how to stop it. */
export interface RunningTarget {
  readonly description: TargetDescription;
  stop(): Promise<void>;
}

const repositoryRoot = path.resolve(import.meta.dirname, '../..');

/**
 * `npm start` in a process group of its own (as a terminal runs it), on a free port, its data in
 * a folder of its own; stopped as Ctrl-C stops it (SIGINT to the group).
 */
export async function startNpmStartTarget(): Promise<RunningTarget> {
  const dataDirectory = mkdtempSync(path.join(tmpdir(), 'plant-store-contract-'));
  const child: ChildProcess = spawn('npm', ['start', '--silent', '--prefix', repositoryRoot], {
    cwd: dataDirectory,
    env: { ...process.env, PORT: '0', PLANT_STORE_DATA_DIR: path.join(dataDirectory, 'data') },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let output = '';
  const keep = (chunk: Buffer) => {
    output += chunk.toString('utf8');
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const stop = async () => {
    if (child.exitCode === null && child.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGINT');
      } catch {
        // Gone already.
      }
      await exited;
    }
    rmSync(dataDirectory, { recursive: true, force: true });
  };
  const deadline = Date.now() + 150_000;
  let port: string | undefined;
  while (port === undefined) {
    port = /API: +http:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1];
    if (port !== undefined) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`npm start did not start:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    description: {
      name: 'npm-start',
      baseUrl: `http://127.0.0.1:${port}`,
      tokens: { kind: 'local', dataDirectory: path.join(dataDirectory, 'data') },
      receiverHost: '127.0.0.1',
      writes: true,
      // npm start lets pages on any port of localhost call it.
      browserOrigin: 'http://localhost:5173',
    },
    stop,
  };
}

/**
 * `sam local start-api` on the synthesized dev template, in the SAM tier's setting (a private
 * Docker engine, the stand-in image, DynamoDB Local and moto at the bridge's gateway); tokens
 * from the local issuer whose keys the setting serves.
 */
export async function startSamTarget(): Promise<RunningTarget> {
  const bed = await startSamBed();
  let api: SamApi;
  try {
    api = await startSamApi(bed);
  } catch (error) {
    await bed.stop();
    throw error;
  }
  return {
    description: {
      name: 'sam',
      baseUrl: api.url,
      omitsHeaders: ['x-amzn-RequestId'],
      tokens: { kind: 'local', dataDirectory: bed.work },
      writes: true,
    },
    stop: async () => {
      console.info(`sam local: ${JSON.stringify(figures)}`);
      await api.stop();
      await bed.stop();
    },
  };
}
