/**
 * `npm run sam:image`: builds the stand-in for AWS's Lambda Node.js 24 image (arm64) into the
 * Docker engine `DOCKER_HOST` names (the default socket when unset), for `sam local …
 * --skip-pull-image` where no registry serves AWS's image. Cached in `.data/sam/`.
 */
import path from 'node:path';
import { repositoryRoot } from '../infra/plant-store-function.ts';
import { ensureStandInImage } from './stand-in-image.ts';

const host = process.env.DOCKER_HOST || 'unix:///var/run/docker.sock';
try {
  const image = ensureStandInImage(host, path.join(repositoryRoot, '.data', 'sam'));
  process.stdout.write(
    `${image.tag} (${image.source}, ${(image.bytes / 2 ** 20).toFixed(0)} MiB archive) in ${image.seconds} s, in the engine at ${host}\n`,
  );
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exitCode = 1;
}
