/**
 * The SAM tier's setting, free of Jest (the contract suite's global setup starts it too): a
 * private Docker engine, the stand-in image, the template as the recipe's `npx cdk synth -c
 * stage=dev` writes it, the services the containers call (`startSamServices`), and `sam local
 * start-api` on it. The figures (engine, image, synth, each request) are collected to print.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { type DockerEngine, startDockerEngine } from '../../beds/sam/docker-engine.ts';
import {
  type SamServices,
  type SynthesizedTemplate,
  startSamServices,
} from '../../beds/sam/sam-services.ts';
import { repositoryRoot } from '../../infra/plant-store-function.ts';
import { ensureStandInImage, type StandInImage } from '../../lambda-image/stand-in-image.ts';

export const run = promisify(execFile);
export const figures: Record<string, number | string> = {};

/** Seconds since `started`, one decimal. */
export const since = (started: number) => Math.round((performance.now() - started) / 100) / 10;

/**
 * The SAM tier's setting, as `startSamBed` makes it: a private Docker engine, the stand-in image,
 * the template as the recipe's `npx cdk synth -c stage=dev` writes it, and the services the
 * containers call. Stopped with `stop`, also when a start fails half way.
 */
export interface SamBed {
  readonly engine: DockerEngine;
  readonly services: SamServices;
  readonly work: string;
  readonly templatePath: string;
  readonly template: SynthesizedTemplate;
  stop(): Promise<void>;
}

/** Starts the setting (minutes the first time: the image is built, then kept in `.data/sam`). */
export async function startSamBed(): Promise<SamBed> {
  const folder = mkdtempSync(path.join(tmpdir(), 'plant-store-sam-'));
  let engine: DockerEngine | undefined;
  let services: SamServices | undefined;
  const stop = async () => {
    await services?.stop();
    await engine?.stop();
    rmSync(folder, { recursive: true, force: true });
  };
  try {
    let started = performance.now();
    engine = await startDockerEngine(path.join(repositoryRoot, '.data', 'docker'));
    figures.engineSeconds = since(started);
    const image: StandInImage = ensureStandInImage(
      engine.host,
      path.join(repositoryRoot, '.data', 'sam'),
    );
    figures.image = `${image.source} in ${image.seconds} s (${Math.round(image.bytes / 2 ** 20)} MiB)`;
    started = performance.now();
    const cdkOut = path.join(folder, 'cdk.out');
    // The recipe's synth, into a folder of the test's own.
    await run('npx', ['cdk', 'synth', '-c', 'stage=dev', '--quiet', '--output', cdkOut], {
      cwd: repositoryRoot,
      maxBuffer: 64 * 1024 * 1024,
    });
    figures.synthSeconds = since(started);
    const synthesized = path.join(cdkOut, 'PlantStore-dev.template.json');
    const parsed = JSON.parse(readFileSync(synthesized, 'utf8')) as SynthesizedTemplate;
    services = await startSamServices({
      host: engine.gatewayAddress,
      template: parsed,
      envVarsFile: path.join(folder, 'env-vars.json'),
      keysDirectory: path.join(folder, 'keys'),
    });
    return { engine, services, work: folder, templatePath: synthesized, template: parsed, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** `sam local start-api` on a port of its own, and a request to it that the figures time. */
export interface SamApi {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
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
 * Starts `sam local start-api` with each function's container made on its first request (the
 * recipe in docs/running-locally.md makes them all at its start) and resolves once it answers.
 */
export async function startSamApi(setting: SamBed): Promise<SamApi> {
  const port = 3000 + Math.floor(Math.random() * 1000);
  const begun = performance.now();
  // As the recipe runs it: through `npm run sam`, which stops SAM when npm gets a SIGTERM.
  const api = spawn(
    'npm',
    [
      'run',
      '-s',
      'sam',
      '--',
      'local',
      'start-api',
      '-t',
      setting.templatePath,
      '--env-vars',
      setting.services.envVarsFile,
      '--skip-pull-image',
      '--warm-containers',
      'LAZY',
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
    ],
    {
      cwd: repositoryRoot,
      env: { ...process.env, DOCKER_HOST: setting.engine.host },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
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
    url,
    call: async (method, requestPath, token, body, headers = {}) => {
      const started = performance.now();
      const heard = output.length;
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
      // What SAM said of a 5xx (a function's timeout, its error), printed with the figures.
      if (response.status >= 500)
        figures[`start-api ${requests}: SAM said`] = output.slice(heard).slice(-2000);
      return response;
    },
    /** Stops it as `docker stop` or an IDE would: SIGTERM to npm alone. */
    stop: async () => {
      if (api.exitCode !== null) return;
      const exited = new Promise((resolve) => api.once('exit', resolve));
      api.kill('SIGTERM');
      await exited;
      const stillAnswers = await fetch(url).then(
        () => true,
        () => false,
      );
      if (stillAnswers) throw new Error('sam local start-api still answers after npm stopped');
    },
  };
}
