/**
 * `npm run sam:services`: what `sam local`'s containers call, on the address where they reach
 * this machine, and the `--env-vars` file that points the synthesized template's functions at
 * it (`sam-services.ts`). Runs until Ctrl-C or SIGTERM.
 *
 * Options: `--template <file>` (default `cdk.out/PlantStore-dev.template.json`), `--host <address>`
 * (default: the gateway of the Docker engine's `bridge` network, asked of the engine
 * `DOCKER_HOST` names), `--env-vars <file>` (default `.data/sam/env-vars.json`).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { repositoryRoot } from '../../infra/plant-store-function.ts';
import { localKeysDirectory } from '../../local/token-issuer.ts';
import { type SynthesizedTemplate, startSamServices } from './sam-services.ts';

const { values } = parseArgs({
  options: {
    template: { type: 'string', default: 'cdk.out/PlantStore-dev.template.json' },
    host: { type: 'string' },
    'env-vars': { type: 'string', default: path.join('.data', 'sam', 'env-vars.json') },
  },
});

function bridgeGateway(): string {
  try {
    return execFileSync(
      'docker',
      ['network', 'inspect', 'bridge', '--format', '{{(index .IPAM.Config 0).Gateway}}'],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    ).trim();
  } catch {
    throw new Error(
      'Could not ask Docker for its bridge network: start Docker (or set DOCKER_HOST), or pass --host <address containers reach this machine at>.',
    );
  }
}

try {
  const template = JSON.parse(readFileSync(values.template, 'utf8')) as SynthesizedTemplate;
  const services = await startSamServices({
    host: values.host ?? bridgeGateway(),
    template,
    envVarsFile: path.resolve(values['env-vars']),
    keysDirectory: localKeysDirectory(),
  });
  const relative = path.relative(repositoryRoot, services.envVarsFile);
  process.stdout.write(
    [
      `For sam local: DynamoDB Local (table "${services.tableName}"), the local issuer's keys, moto and a webhook receiver, for containers at ${values.host ?? 'the bridge'}.`,
      `  Env vars:   ${relative}`,
      `  Invoke:     npm run -s sam -- local invoke -t ${values.template} CreatePlant -e events/create-plant.json --env-vars ${relative} --skip-pull-image`,
      `  API:        npm run -s sam -- local start-api -t ${values.template} --env-vars ${relative} --skip-pull-image --warm-containers EAGER`,
      `  Token:      ${services.signToken({ expiresInSeconds: 3600 })}`,
      'Ctrl-C stops them.',
      '',
    ].join('\n'),
  );
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await services.stop();
    process.exit(0);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, stop);
} catch (error) {
  process.stderr.write(`Could not start the services for sam local: ${(error as Error).message}\n`);
  process.exit(1);
}
