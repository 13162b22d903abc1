/**
 * The PlantStore-Pipeline stack as `npm run pipeline:deploy` synthesizes it: cdk-nag's packs and
 * cfn-guard's Control Tower rules find nothing and acknowledge nothing, and cfn-lint finds
 * nothing at all.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from '@jest/globals';
import { repositoryRoot } from '../../infra/plant-store-function.ts';
import { findPythonTool } from '../../local/python-tools.ts';

const outdir = mkdtempSync(path.join(tmpdir(), 'plant-store-pipeline-synth-'));

afterAll(() => rmSync(outdir, { recursive: true, force: true }));

it('passes cdk-nag, cfn-guard and cfn-lint with only the smoke’s two reads acknowledged', () => {
  const synth = spawnSync(process.execPath, [path.join(repositoryRoot, 'infra/pipeline-app.ts')], {
    cwd: repositoryRoot,
    env: { ...process.env, CDK_OUTDIR: outdir },
    encoding: 'utf8',
  });
  expect({ status: synth.status, stderr: synth.stderr }).toEqual({
    status: 0,
    stderr: expect.any(String),
  });
  // A plugin reports only what it found or was told to overlook: here cdk-nag, the two
  // wildcards of each deploy role's smoke reads, each with its reason, and nothing else.
  // (`pipeline.test.ts` shows the same checks report a role given a wildcard.)
  const report = JSON.parse(readFileSync(path.join(outdir, 'validation-report.json'), 'utf8')) as {
    pluginReports: {
      pluginName: string;
      violations: unknown[];
      suppressedViolations: { ruleName: string; acknowledgedAt: string; reason: string }[];
    }[];
  };
  expect(report.pluginReports.map((plugin) => plugin.pluginName)).toEqual(['AwsSolutions']);
  const [nag] = report.pluginReports;
  expect(nag?.violations).toEqual([]);
  const acknowledged = (nag?.suppressedViolations ?? []).map(
    (one) => `${one.acknowledgedAt} ${/:(stack|userpool)\//.exec(one.ruleName)?.[1]}`,
  );
  expect(acknowledged.sort()).toEqual(
    ['dev', 'prod'].flatMap((stage) => [
      `PlantStore-Pipeline/Deploy-${stage} stack`,
      `PlantStore-Pipeline/Deploy-${stage} userpool`,
    ]),
  );
  for (const one of nag?.suppressedViolations ?? []) expect(one.reason.length).toBeGreaterThan(20);
  expect(readFileSync(path.join(outdir, 'manifest.json'), 'utf8')).toContain('PlantStore-Pipeline');
  const lint = spawnSync(
    findPythonTool('cfn-lint'),
    ['--format', 'json', '--', path.join(outdir, 'PlantStore-Pipeline.template.json')],
    { encoding: 'utf8' },
  );
  expect(JSON.parse(lint.stdout || '[]')).toEqual([]);
}, 180_000);
