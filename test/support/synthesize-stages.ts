/**
 * `node test/support/synthesize-stages.ts <folder>`: synthesizes every stage into one cloud
 * assembly, as the CDK CLI does (cdk.json's feature flags, construct paths and asset folders for
 * `sam local`), bundled, with cdk-nag's packs checking it. The CDK bundles each function once for
 * all stages (its asset cache is per output folder). Each stage's checks report and manifest are
 * kept as `validation-report.<stage>.json` and `manifest.<stage>.json` (the next synth writes its
 * own), then `complete` is written.
 */
import { copyFileSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createPlantStoreApp } from '../../infra/plant-store-app.ts';
import { repositoryRoot } from '../../infra/plant-store-function.ts';
import { stages } from '../../infra/stages.ts';

const outdir = process.argv[2];
if (outdir === undefined) throw new Error('Usage: synthesize-stages.ts <folder>');
const cdkJson = JSON.parse(readFileSync(path.join(repositoryRoot, 'cdk.json'), 'utf8')) as {
  context: Record<string, unknown>;
};
for (const stage of Object.values(stages)) {
  const { app } = createPlantStoreApp(
    {
      outdir,
      context: {
        ...cdkJson.context,
        stage: stage.name,
        'aws:cdk:enable-path-metadata': true,
        'aws:cdk:enable-asset-metadata': true,
      },
    },
    { checks: ['cdk-nag'] },
  );
  app.synth();
  renameSync(
    path.join(outdir, 'validation-report.json'),
    path.join(outdir, `validation-report.${stage.name}.json`),
  );
  // Each synth writes the manifest of its one stack: kept per stage, to deploy one from here.
  copyFileSync(
    path.join(outdir, 'manifest.json'),
    path.join(outdir, `manifest.${stage.name}.json`),
  );
}
writeFileSync(path.join(outdir, 'complete'), `${new Date().toISOString()}\n`);
