/**
 * The SAM tier's setting, started once per test file: a private Docker engine, the stand-in
 * image, the template as `npx cdk synth -c stage=dev` writes it, and the services the containers
 * call (`startSamServices`); and `sam local invoke` as the recipe runs it. The figures (engine,
 * image, synth, each invoke) are collected for the suite to print.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll } from '@jest/globals';
import type { DockerEngine } from '../../beds/sam/docker-engine.ts';
import { samCommand } from '../../beds/sam/sam-cli.ts';
import type { SamServices, SynthesizedTemplate } from '../../beds/sam/sam-services.ts';
import { createLogger } from '../../functions/shared/platform/logger.ts';
import { repositoryRoot } from '../../infra/plant-store-function.ts';
import {
  figures,
  run,
  type SamApi,
  type SamBed,
  since,
  startSamApi,
  startSamBed,
} from './sam-bed.ts';

export { figures, run, type SamApi, since };

export const quiet = createLogger({}, () => {});

let bed: SamBed | undefined;
export let work: string;
export let templatePath: string;
export let template: SynthesizedTemplate;

/** Starts the setting before the file's tests and stops it after, printing the figures. */
export function useSamSuite(): void {
  beforeAll(async () => {
    bed = await startSamBed();
    ({ work, templatePath, template } = bed);
  }, 900_000);

  afterAll(async () => {
    console.info(`sam local: ${JSON.stringify(figures)}`);
    await bed?.stop();
  });
}

export function started(): { engine: DockerEngine; services: SamServices } {
  if (bed === undefined) throw new Error('the suite did not start');
  return { engine: bed.engine, services: bed.services };
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
  const { stdout, stderr } = await run(
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
  const answer = stdout.trim().split('\n').at(-1) ?? '';
  if (answer === '')
    throw new Error(`sam local invoke ${constructId} answered nothing:\n${stderr.slice(-4000)}`);
  return JSON.parse(answer);
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
  const { ETag: etag, traceresponse, ...rest } = headers;
  return {
    statusCode,
    headers: rest,
    etag: etag === undefined ? undefined : /^"\d+"$/.test(etag),
    // Each invocation is a span of a trace of its own: only its form can agree.
    traceresponse:
      traceresponse === undefined
        ? undefined
        : /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/.test(traceresponse),
    body,
  };
}

/** `sam local start-api` on the file's setting. */
export function startFileSamApi(): Promise<SamApi> {
  if (bed === undefined) throw new Error('the suite did not start');
  return startSamApi(bed);
}
