/**
 * The SAM tier's setting, started once per test file: a private Docker engine, the stand-in
 * image, the template as `npx cdk synth -c stage=dev` writes it, and the services the containers
 * call (`startSamServices`); and `sam local invoke` as the recipe runs it. The figures (engine,
 * image, synth, each invoke) are collected for the suite to print.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll } from '@jest/globals';
import { createLogger } from '../../functions/shared/platform/logger.ts';
import { repositoryRoot } from '../../infra/plant-store-function.ts';
import { type DockerEngine, startDockerEngine } from '../../local/sam/docker-engine.ts';
import { samCommand } from '../../local/sam/sam-cli.ts';
import {
  type SamServices,
  type SynthesizedTemplate,
  startSamServices,
} from '../../local/sam/sam-services.ts';
import { ensureStandInImage, type StandInImage } from '../../local/sam/stand-in-image.ts';

export const run = promisify(execFile);
export const quiet = createLogger({}, () => {});
export const figures: Record<string, number | string> = {};

let engine: DockerEngine | undefined;
let image: StandInImage;
let services: SamServices | undefined;
export let work: string;
export let templatePath: string;
export let template: SynthesizedTemplate;

/** Seconds since `started`, one decimal. */
export const since = (started: number) => Math.round((performance.now() - started) / 100) / 10;

/** Starts the setting before the file's tests and stops it after, printing the figures. */
export function useSamSuite(): void {
  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'plant-store-sam-'));
    let started = performance.now();
    engine = await startDockerEngine(path.join(repositoryRoot, '.data', 'docker'));
    figures.engineSeconds = since(started);
    image = ensureStandInImage(engine.host, path.join(repositoryRoot, '.data', 'sam'));
    figures.image = `${image.source} in ${image.seconds} s (${Math.round(image.bytes / 2 ** 20)} MiB)`;
    started = performance.now();
    const cdkOut = path.join(work, 'cdk.out');
    // The recipe's synth, into a folder of the test's own.
    await run('npx', ['cdk', 'synth', '-c', 'stage=dev', '--quiet', '--output', cdkOut], {
      cwd: repositoryRoot,
      maxBuffer: 64 * 1024 * 1024,
    });
    figures.synthSeconds = since(started);
    templatePath = path.join(cdkOut, 'PlantStore-dev.template.json');
    template = JSON.parse(readFileSync(templatePath, 'utf8')) as SynthesizedTemplate;
    services = await startSamServices({
      host: engine.gatewayAddress,
      template,
      envVarsFile: path.join(work, 'env-vars.json'),
      keysDirectory: path.join(work, 'keys'),
    });
  }, 900_000);

  afterAll(async () => {
    console.info(`sam local: ${JSON.stringify(figures)}`);
    await services?.stop();
    await engine?.stop();
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
  });
}

export function started(): { engine: DockerEngine; services: SamServices } {
  if (engine === undefined || services === undefined) throw new Error('the suite did not start');
  return { engine, services };
}

/** The logical id of the function the stack builds under `constructId` (`CreatePlant`). */
export function logicalIdOf(constructId: string): string {
  const found = Object.entries(template.Resources).find(
    ([, resource]) =>
      resource.Type === 'AWS::Lambda::Function' &&
      String(resource.Metadata?.['aws:cdk:path']).split('/')[1] === constructId,
  );
  if (found === undefined) throw new Error(`No function ${constructId} in the template`);
  return found[0];
}

/** `sam local invoke` of `constructId` with `eventPath`: its answer, parsed. */
export async function samInvoke(constructId: string, eventPath: string): Promise<unknown> {
  const { command, environment } = samCommand({
    ...process.env,
    DOCKER_HOST: started().engine.host,
  });
  const begun = performance.now();
  const { stdout } = await run(
    command,
    [
      'local',
      'invoke',
      '-t',
      templatePath,
      constructId,
      '-e',
      eventPath,
      '--env-vars',
      started().services.envVarsFile,
      '--skip-pull-image',
    ],
    { env: environment, maxBuffer: 16 * 1024 * 1024 },
  );
  figures[`invoke ${constructId} s`] = since(begun);
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? 'null');
}

export const eventFile = (name: string) => path.join(repositoryRoot, 'events', `${name}.json`);
export const readEvent = (name: string) => JSON.parse(readFileSync(eventFile(name), 'utf8'));
export const pascalCase = (name: string) => `${name.charAt(0).toUpperCase()}${name.slice(1)}`;

/**
 * A proxy answer with what changes from run to run taken out: an ETag is a version in
 * microseconds of the clock, so only its form is compared.
 */
export function comparable(answer: unknown) {
  const {
    statusCode,
    headers = {},
    body,
  } = answer as {
    statusCode: number;
    headers?: Record<string, string>;
    body: string;
  };
  const { ETag: etag, ...rest } = headers;
  return {
    statusCode,
    headers: rest,
    etag: etag === undefined ? undefined : /^"\d+"$/.test(etag),
    body,
  };
}

/** `sam local start-api` on a port of its own, and a request to it that the figures time. */
export interface SamApi {
  call(
    method: string,
    requestPath: string,
    token: string | undefined,
    body?: string,
    headers?: Record<string, string>,
  ): Promise<Response>;
  stop(): Promise<void>;
}

/**
 * Starts `sam local start-api` as the recipe does (each function's container made on its first
 * request) and resolves once it answers.
 */
export async function startSamApi(): Promise<SamApi> {
  const { command, environment } = samCommand({
    ...process.env,
    DOCKER_HOST: started().engine.host,
  });
  const port = 3000 + Math.floor(Math.random() * 1000);
  const begun = performance.now();
  const api = spawn(
    command,
    [
      'local',
      'start-api',
      '-t',
      templatePath,
      '--env-vars',
      started().services.envVarsFile,
      '--skip-pull-image',
      '--warm-containers',
      'LAZY',
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
    ],
    { env: environment, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString('utf8');
  };
  api.stdout?.on('data', collect);
  api.stderr?.on('data', collect);
  const deadline = Date.now() + 180_000;
  while (!output.includes('Running on')) {
    if (api.exitCode !== null || Date.now() > deadline) {
      throw new Error(`sam local start-api did not start: ${output.slice(-2000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  figures.startApiSeconds = since(begun);
  const url = `http://127.0.0.1:${port}`;
  let requests = 0;
  return {
    call: async (method, requestPath, token, body, headers = {}) => {
      const started = performance.now();
      const response = await fetch(`${url}${requestPath}`, {
        method,
        headers: {
          ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }),
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
          ...headers,
        },
        ...(body === undefined ? {} : { body }),
      });
      requests += 1;
      figures[`start-api ${requests}: ${method} ${requestPath} → ${response.status}, s`] =
        since(started);
      return response;
    },
    stop: async () => {
      if (api.exitCode !== null) return;
      const exited = new Promise((resolve) => api.once('exit', resolve));
      api.kill('SIGINT');
      await exited;
    },
  };
}
