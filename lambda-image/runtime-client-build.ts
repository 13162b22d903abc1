/**
 * AWS's runtime interface client (`aws-lambda-ric` from npm) for the stand-in Lambda image
 * (`stand-in-image.ts`), its native part cross-compiled for arm64 with Debian's aarch64 toolchain,
 * and the build steps both use.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** AWS's runtime interface client, as published on npm. */
export const runtimeClientVersion = '4.0.2';
export const crossPrefix = 'aarch64-linux-gnu';
/** Debian's arm64 C and C++ libraries (g++-aarch64-linux-gnu). */
export const crossLibraries = `/usr/${crossPrefix}/lib`;

/** Runs a build step, its output to a log; throws naming the step and the log when it fails. */
export function step(
  name: string,
  log: string,
  command: string,
  args: string[],
  options = {},
): void {
  const run = spawnSync(command, args, {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    ...options,
  });
  writeFileSync(log, `${run.stdout ?? ''}${run.stderr ?? ''}`);
  if (run.status !== 0) {
    throw new Error(`Building the stand-in Lambda image failed at ${name}: see ${log}.`);
  }
}

/**
 * `aws-lambda-ric` with its native part built for arm64: what its `preinstall.sh` and
 * `postinstall.sh` do natively (a minimal static curl, aws-lambda-cpp, the node-gyp addon),
 * here with the aarch64 cross compiler. Answers the package's folder.
 */
export function buildRuntimeClient(
  nodeDirectory: string,
  work: string,
  log: (name: string) => string,
): string {
  const project = path.join(work, 'ric');
  mkdirSync(project);
  writeFileSync(path.join(project, 'package.json'), '{"private":true}\n');
  step('npm install aws-lambda-ric', log('ric-install'), 'npm', [
    'install',
    '--ignore-scripts',
    '--no-audit',
    '--no-fund',
    '--prefix',
    project,
    `aws-lambda-ric@${runtimeClientVersion}`,
  ]);
  const client = path.join(project, 'node_modules', 'aws-lambda-ric');
  const artifacts = path.join(work, 'artifacts');
  const cross = {
    ...process.env,
    CC: `${crossPrefix}-gcc`,
    CXX: `${crossPrefix}-g++`,
    LINK: `${crossPrefix}-g++`,
    AR: `${crossPrefix}-ar`,
  };
  const curl = path.join(work, 'curl');
  const cpp = path.join(work, 'aws-lambda-cpp');
  for (const [archiveName, target] of [
    ['curl.tar.xz', curl],
    ['aws-lambda-cpp.tar.xz', cpp],
  ] as const) {
    mkdirSync(target);
    step(`extracting ${archiveName}`, log(archiveName), 'tar', [
      '-xJf',
      path.join(client, 'deps', archiveName),
      '--no-same-owner',
      '-C',
      target,
    ]);
  }
  step(
    'configuring curl',
    log('curl-configure'),
    './configure',
    [`--host=${crossPrefix}`, '--prefix', artifacts, ...curlOptions],
    { cwd: curl, env: cross },
  );
  step('building curl', log('curl-make'), 'make', ['-j', '2', 'install'], {
    cwd: curl,
    env: cross,
  });
  const cppBuild = path.join(cpp, 'build');
  mkdirSync(cppBuild);
  step(
    'configuring aws-lambda-cpp',
    log('cpp-cmake'),
    'cmake',
    [
      '..',
      '-DCMAKE_SYSTEM_NAME=Linux',
      '-DCMAKE_SYSTEM_PROCESSOR=aarch64',
      `-DCMAKE_C_COMPILER=${crossPrefix}-gcc`,
      `-DCMAKE_CXX_COMPILER=${crossPrefix}-g++`,
      '-DCMAKE_CXX_FLAGS=-fPIC',
      `-DCMAKE_INSTALL_PREFIX=${artifacts}`,
      `-DCMAKE_PREFIX_PATH=${artifacts}`,
    ],
    { cwd: cppBuild },
  );
  step('building aws-lambda-cpp', log('cpp-make'), 'make', ['-j', '2', 'install'], {
    cwd: cppBuild,
  });
  step(
    'building the native client',
    log('node-gyp'),
    path.join(project, 'node_modules', '.bin', 'node-gyp'),
    ['rebuild', '--directory=src/native', '--arch=arm64', `--nodedir=${nodeDirectory}`],
    { cwd: client, env: { ...cross, DEPS_PREFIX: artifacts } },
  );
  return client;
}

/** The flags `aws-lambda-ric`'s preinstall builds curl with: HTTP to the runtime API, nothing more. */
const curlOptions = [
  ...[
    'alt-svc',
    'ares',
    'cookies',
    'crypto-auth',
    'dateparse',
    'dict',
    'dnsshuffle',
    'doh',
    'file',
    'ftp',
    'get-easy-options',
    'gopher',
    'hsts',
    'http-auth',
    'imap',
    'ipv6',
    'ldap',
    'ldaps',
    'libcurl-option',
    'manual',
    'mime',
    'mqtt',
    'netrc',
    'ntlm-wb',
    'pop3',
    'progress-meter',
    'proxy',
    'pthreads',
    'rtsp',
    'shared',
    'smtp',
    'socketpair',
    'sspi',
    'telnet',
    'tftp',
    'threaded-resolver',
    'unix-sockets',
    'verbose',
    'versioned-symbols',
  ].map((feature) => `--disable-${feature}`),
  '--with-pic',
  ...[
    'brotli',
    'ca-bundle',
    'gssapi',
    'libidn2',
    'libpsl',
    'librtmp',
    'libssh2',
    'nghttp2',
    'nghttp3',
    'ngtcp2',
    'ssl',
    'zlib',
    'zstd',
  ].map((library) => `--without-${library}`),
];
