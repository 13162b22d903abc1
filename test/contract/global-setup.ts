/**
 * Jest's global setup of the contract suite: the target its files run against. Given a target
 * description already (`npm run smoke` writes one for a deployed stage), it uses that; else it
 * starts the one `PLANT_STORE_TARGET` names: `npm-start` (the default) as a developer runs it, in
 * a child process group, on a free port with a data folder of its own; or `sam`, `sam local
 * start-api` on the synthesized template (`test/sam/sam-api.ts`). The teardown stops it.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type RunningTarget, startNpmStartTarget, startSamTarget } from './running-targets.ts';
import { type TargetDescription, targetFileVariable } from './target.ts';

declare global {
  // The teardown, which Jest runs in the same process, stops what the setup started.
  var plantStoreContractTarget: RunningTarget | undefined;
}

export default async function globalSetup(): Promise<void> {
  if (process.env[targetFileVariable] !== undefined) return;
  const name = process.env.PLANT_STORE_TARGET ?? 'npm-start';
  const running =
    name === 'npm-start'
      ? await startNpmStartTarget()
      : name === 'sam'
        ? await startSamTarget()
        : undefined;
  if (running === undefined) {
    throw new Error(
      `PLANT_STORE_TARGET must be npm-start or sam (a deployed stage: npm run smoke -- --stack <name>), got "${name}".`,
    );
  }
  globalThis.plantStoreContractTarget = running;
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'plant-store-target-')), 'target.json');
  writeFileSync(file, JSON.stringify(running.description satisfies TargetDescription));
  process.env[targetFileVariable] = file;
  console.info(
    `\ncontract suite against ${running.description.name}: ${running.description.baseUrl}`,
  );
}
