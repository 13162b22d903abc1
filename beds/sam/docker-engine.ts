/**
 * A Docker engine for `sam local`: the user's own (`DOCKER_HOST`), or a private one this process
 * starts and stops (Debian's `docker.io`): its own data root and socket under `.data/docker/`, its
 * own bridge on one /24, no iptables rules, so its containers reach nothing but this machine (at
 * the bridge's gateway). It runs under the same `sh` guard as DynamoDB Local: however this
 * process ends, the engine stops and the bridge goes.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { ensurePrivateDirectory } from '../../local/private-directory.ts';

export interface DockerEngine {
  /** For `DOCKER_HOST`: `unix:///…/docker.sock`. */
  readonly host: string;
  /** Where a container reaches this machine: the bridge's gateway, an address of this machine. */
  readonly gatewayAddress: string;
  /** Whether this process started the engine (and `stop` stops it). */
  readonly private: boolean;
  stop(): Promise<void>;
}

/** The private engine's bridge: one /24 of its own, named so that nobody mistakes it. */
export const privateBridge = { name: 'plantstore0', gateway: '172.29.213.1', prefixLength: 24 };

/** Thrown, in one line, when this machine cannot run the engine the SAM tier needs. */
export class DockerUnavailableError extends Error {
  override readonly name = 'DockerUnavailableError';
}

/**
 * The engine `DOCKER_HOST` names, or a private one started under `directory`.
 * @throws DockerUnavailableError saying how to get what is missing.
 */
export async function startDockerEngine(directory: string): Promise<DockerEngine> {
  const given = process.env.DOCKER_HOST;
  if (given !== undefined && given !== '') return usingGivenEngine(given);
  checkPrivateEnginePrerequisites();
  ensureArm64Emulation();
  ensurePrivateDirectory(directory);
  const socket = path.join(directory, 'docker.sock');
  // A Unix socket's path is limited to 107 bytes.
  if (Buffer.byteLength(socket) > 100) {
    throw new DockerUnavailableError(
      `The Docker socket path ${socket} is too long for a Unix socket; clone the repository to a shorter path or set DOCKER_HOST.`,
    );
  }
  const guard = startGuard(directory, socket);
  const host = `unix://${socket}`;
  try {
    await waitUntilAnswering(socket, guard);
  } catch (error) {
    await stopGuard(guard);
    throw error;
  }
  return {
    host,
    gatewayAddress: privateBridge.gateway,
    private: true,
    stop: () => stopGuard(guard),
  };
}

/** The user's engine, untouched but for asking it where its bridge's gateway is. */
function usingGivenEngine(host: string): DockerEngine {
  let gatewayAddress: string;
  try {
    gatewayAddress = execFileSync(
      'docker',
      ['network', 'inspect', 'bridge', '--format', '{{(index .IPAM.Config 0).Gateway}}'],
      { encoding: 'utf8', env: { ...process.env, DOCKER_HOST: host } },
    ).trim();
  } catch (error) {
    throw new DockerUnavailableError(
      `DOCKER_HOST=${host} does not answer \`docker network inspect bridge\`: ${(error as Error).message.split('\n')[0]}`,
    );
  }
  return { host, gatewayAddress, private: false, stop: async () => {} };
}

function checkPrivateEnginePrerequisites(): void {
  const missing = ['dockerd', 'docker', 'ip'].filter(
    (command) =>
      execFileSync('sh', ['-c', `command -v ${command} || true`], { encoding: 'utf8' }).trim() ===
      '',
  );
  if (missing.length > 0) {
    throw new DockerUnavailableError(
      `The SAM tier needs a Docker engine (${missing.join(', ')} not found): run \`bash .ci/docker\` (Debian's docker.io, qemu-user-static), or set DOCKER_HOST to an engine of your own.`,
    );
  }
  if (process.getuid?.() !== 0) {
    throw new DockerUnavailableError(
      'The SAM tier starts a private Docker engine, which needs root: run it as root, or set DOCKER_HOST to an engine of your own.',
    );
  }
}

const binfmtDirectory = '/proc/sys/fs/binfmt_misc';
const qemuAarch64Registration = '/usr/lib/binfmt.d/qemu-aarch64.conf';

/**
 * The functions are arm64: on another machine their containers run through qemu, which the
 * kernel starts for arm64 programs once binfmt_misc knows it. Registered with Debian's
 * `qemu-user-static` entry (flag F: the interpreter is opened now, so it works inside
 * containers); left registered afterwards, as `binfmt-support` would.
 */
function ensureArm64Emulation(): void {
  if (process.arch === 'arm64') return;
  const entry = path.join(binfmtDirectory, 'qemu-aarch64');
  if (existsSync(entry) && readFileSync(entry, 'utf8').startsWith('enabled')) return;
  if (!existsSync(qemuAarch64Registration)) {
    throw new DockerUnavailableError(
      'Running the arm64 functions needs qemu-user-static: run `bash .ci/docker`.',
    );
  }
  if (!existsSync(path.join(binfmtDirectory, 'register'))) {
    execFileSync('mount', ['-t', 'binfmt_misc', 'binfmt_misc', binfmtDirectory]);
  }
  execFileSync('sh', ['-c', `cat ${qemuAarch64Registration} > ${binfmtDirectory}/register`]);
}

/**
 * The guard: makes the bridge, starts dockerd on it, reports dockerd's pid, then waits for stdin
 * to close (stop() or the death of this process) and stops the engine and removes the bridge.
 */
const guardScript = `
trap '' PIPE
bridge=$1; address=$2; directory=$3; socket=$4
ip link show "$bridge" >/dev/null 2>&1 && ip link delete "$bridge"
ip link add name "$bridge" type bridge && ip addr add "$address" dev "$bridge" && ip link set "$bridge" up || exit 3
dockerd --bridge="$bridge" --iptables=false --ip6tables=false --ip-masq=false \\
  --data-root="$directory/data" --exec-root="$directory/exec" --pidfile="$directory/dockerd.pid" \\
  --host="unix://$socket" </dev/null >"$directory/dockerd.log" 2>&1 &
engine=$!
stop_engine() { kill "$engine" 2>/dev/null; wait "$engine"; ip link delete "$bridge" 2>/dev/null; exit 0; }
trap stop_engine TERM INT HUP
echo "$engine"
read -r _
stop_engine
`;

function startGuard(directory: string, socket: string): ChildProcess {
  const address = `${privateBridge.gateway}/${privateBridge.prefixLength}`;
  return spawn(
    'sh',
    ['-c', guardScript, 'docker-guard', privateBridge.name, address, directory, socket],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
}

async function stopGuard(guard: ChildProcess): Promise<void> {
  if (guard.exitCode !== null || guard.signalCode !== null) return;
  const exited = new Promise((resolve) => guard.once('exit', resolve));
  guard.stdin?.end();
  const killer = setTimeout(() => guard.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(killer);
}

/** Polls the engine's `/_ping` until it answers, the guard dies, or 60 s pass. */
async function waitUntilAnswering(socket: string, guard: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (guard.exitCode !== null) {
      throw new DockerUnavailableError(
        `The private Docker engine could not start (exit ${guard.exitCode}); see ${path.join(path.dirname(socket), 'dockerd.log')}.`,
      );
    }
    if (await pings(socket)) return;
    await delay(200);
  }
  throw new DockerUnavailableError(`The private Docker engine did not answer on ${socket}.`);
}

function pings(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const ping = request({ socketPath: socket, path: '/_ping', timeout: 1_000 }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    ping.on('error', () => resolve(false));
    ping.on('timeout', () => ping.destroy());
    ping.end();
  });
}
