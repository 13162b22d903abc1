/**
 * `npm run emulator -- --stage dev`: a stage deployed on MiniStack, an AWS emulator on this
 * machine, with the real CDK CLI: synthesized, changed where MiniStack differs from AWS (each
 * difference printed, `local/ministack/ministack-differences.ts`), bootstrapped and deployed. It prints the
 * API's address and a ready-to-paste `curl` with a token from the stage's own user pool, as
 * `npm start` does; Ctrl-C or SIGTERM destroys the stack and stops the emulator.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { repositoryRoot } from '../infra/plant-store-function.ts';
import { type MiniStack, recordStack, startMiniStack } from './ministack/ministack.ts';
import { miniStackAssemblyOf } from './ministack/ministack-differences.ts';
import { emulatedStageAccess } from './smoke.ts';

const run = promisify(execFile);

const usage = `Usage: npm run emulator -- [--stage dev]

Deploys the stage on MiniStack (an AWS emulator, installed by npm install's Python tools) with
the CDK CLI, prints its address and a curl with a token, and destroys it all on Ctrl-C or SIGTERM.
MiniStack has no CodeDeploy: a stage with gradual deployments (prod) deploys at once there.
`;

/** The CDK CLI of the project, against the emulator. */
function cdk(ministack: MiniStack, args: readonly string[], cwd: string) {
  return run(path.join(repositoryRoot, 'node_modules/.bin/cdk'), [...args, '--no-notices'], {
    cwd,
    env: { ...process.env, ...ministack.clientEnvironment, CDK_DISABLE_VERSION_CHECK: 'true' },
    maxBuffer: 64 * 1024 * 1024,
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { stage: { type: 'string', default: 'dev' }, help: { type: 'boolean' } },
  });
  if (values.help) {
    process.stdout.write(usage);
    return;
  }
  const stage = values.stage;
  const stackName = `PlantStore-${stage}`;
  // Outside the repository: MiniStack runs each function beside a CommonJS shim, which the
  // repository's `"type": "module"` would make an ES module.
  const work = mkdtempSync(path.join(tmpdir(), `plant-store-emulator-${stage}-`));
  const say = (line: string) => process.stdout.write(`${line}\n`);

  const ministack = await startMiniStack(path.join(work, 'state'));
  let deployed = false;
  let stopping: Promise<void> | undefined;
  const stop = (reason: string) => {
    stopping ??= (async () => {
      say(`${reason}: destroying ${stackName} and stopping the emulator…`);
      try {
        if (deployed)
          await cdk(ministack, ['destroy', stackName, '--app', 'deploy', '--force'], work);
      } finally {
        await ministack.stop();
        rmSync(work, { recursive: true, force: true });
      }
      say('Stopped.');
    })();
    return stopping;
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => void stop(signal).then(() => process.exit(0)));
  }
  try {
    say(`MiniStack on ${ministack.url}. Synthesizing ${stackName}…`);
    await deployStage(ministack, stage, work, say);
    deployed = true;

    await printAccess(ministack, stage, say);
    say('Ctrl-C destroys the stack and stops the emulator.');
  } catch (error) {
    const output = (error as { stderr?: string }).stderr ?? '';
    process.stderr.write(
      `${error instanceof Error ? error.message : String(error)}\n${output.slice(-4000)}`,
    );
    await stop('Failed');
    process.exit(1);
  }
}

/** Synthesizes `stage`, adapts it to MiniStack (printing each difference), bootstraps, deploys. */
async function deployStage(
  ministack: MiniStack,
  stage: string,
  work: string,
  say: (line: string) => void,
): Promise<void> {
  await run(
    path.join(repositoryRoot, 'node_modules/.bin/cdk'),
    ['synth', '-q', '-c', `stage=${stage}`, '-o', path.join(work, 'synth'), '--no-notices'],
    { cwd: repositoryRoot, maxBuffer: 64 * 1024 * 1024 },
  );
  const differences = miniStackAssemblyOf(
    path.join(work, 'synth'),
    stage,
    path.join(work, 'deploy'),
  );
  // One line per kind of change, with the resources it touches.
  const kinds = Map.groupBy(differences, ({ change, reason }) => `${change} (${reason})`);
  say('Where MiniStack differs from AWS (docs/deploying.md):');
  for (const [kind, resources] of kinds) {
    say(`  ${kind}: ${resources.map(({ resource }) => resource).join(', ')}`);
  }
  await cdk(
    ministack,
    ['bootstrap', `aws://${ministack.account}/${ministack.region}`, '--app', 'deploy'],
    work,
  );
  await cdk(
    ministack,
    ['deploy', `PlantStore-${stage}`, '--app', 'deploy', '--require-approval', 'never'],
    work,
  );
  // Where its calls are recorded (`PLANT_STORE_AWS_CALLS`), what the permissions tier reads.
  await recordStack(
    ministack,
    `PlantStore-${stage}`,
    JSON.parse(
      readFileSync(path.join(work, 'deploy', `PlantStore-${stage}.template.json`), 'utf8'),
    ),
  );
}

/** Makes the stage's first request (so the user's is warm), then prints how to reach it. */
async function printAccess(
  ministack: MiniStack,
  stage: string,
  say: (line: string) => void,
): Promise<void> {
  const stackName = `PlantStore-${stage}`;
  Object.assign(process.env, ministack.clientEnvironment);
  const access = await emulatedStageAccess(
    stackName,
    stage,
    ministack.url,
    'plants/read plants/write',
  );
  const { token, stageUrl: apiUrl, tokenUrl, clientId, clientSecret: secret } = access;
  let status = 0;
  for (let attempt = 1; attempt <= 3 && status !== 200; attempt += 1) {
    const answer = await fetch(`${apiUrl}/plants?limit=1`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    status = answer.status;
    await answer.body?.cancel();
  }
  if (status !== 200) throw new Error(`GET /plants answered ${status} on the emulated stage.`);
  say('');
  say(`${stackName} is deployed on MiniStack: ${apiUrl}`);
  say(`  curl -H "Authorization: Bearer ${token}" ${apiUrl}/plants`);
  say(`More tokens (an hour each), from the stage's user pool:`);
  say(`  curl -u ${clientId}:${secret} -d grant_type=client_credentials ${tokenUrl}`);
  say(
    `AWS clients: AWS_ENDPOINT_URL=${ministack.url} AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=${ministack.region}`,
  );
}

await main();
