/**
 * `npm run docker`: the SAM tier's private Docker engine, for trying `sam local` by hand on a
 * machine without a Docker engine of its own (`docker-engine.ts`: Debian's `dockerd` as root, its
 * data, socket and bridge its own, nothing else touched). It prints the `DOCKER_HOST` to export in
 * every terminal that runs `npm run sam:image`, `npm run sam:services` or `npm run sam`, and runs
 * until Ctrl-C or a SIGTERM, which stop the engine and its containers and remove its bridge.
 */
import path from 'node:path';
import { repositoryRoot } from '../../infra/plant-store-function.ts';
import { DockerUnavailableError, startDockerEngine } from './docker-engine.ts';

async function main(): Promise<void> {
  if (process.env.DOCKER_HOST?.trim()) {
    process.stderr.write(
      `DOCKER_HOST is set (${process.env.DOCKER_HOST}): use that engine; unset it to start the private one.\n`,
    );
    process.exit(1);
  }
  let engine: Awaited<ReturnType<typeof startDockerEngine>>;
  try {
    engine = await startDockerEngine(path.join(repositoryRoot, '.data', 'docker'));
  } catch (error) {
    const message = error instanceof DockerUnavailableError ? error.message : String(error);
    process.stderr.write(`Could not start the private Docker engine: ${message}\n`);
    process.exit(1);
  }
  process.stdout.write(
    [
      `Private Docker engine ready; containers reach this machine at ${engine.gatewayAddress}.`,
      'In every terminal that runs sam local (npm run sam:image, sam:services, sam):',
      '',
      `  export DOCKER_HOST=${engine.host}`,
      '',
      'Ctrl-C stops it, its containers with it.',
      '',
    ].join('\n'),
  );
  const stop = async () => {
    await engine.stop();
    process.exit(0);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, stop);
  // Keeps the process alive until a signal.
  setInterval(() => undefined, 1 << 30);
}

await main();
