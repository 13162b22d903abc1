/**
 * cfn-lint, AWS's CloudFormation linter, over every stage's synthesized template: no error, and
 * exactly the listed rules ignored, each with its reason and AWS reference.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { type StageConfig, stages } from '../../infra/stages.ts';
import { findPythonTool } from '../../local/python-tools.ts';
import { cfnLintExceptions } from './cfn-lint-exceptions.ts';
import { synthesizedStages } from './synthesized-stages.ts';

const synthesizedStage = synthesizedStages();

describe('cfn-lint, AWS CloudFormation linter, over every stage', () => {
  interface CfnLintMatch {
    readonly Level: string;
    readonly Rule: { readonly Id: string };
    readonly Message: string;
    readonly Filename: string;
  }
  const templateOf = (stage: StageConfig) =>
    path.join(synthesizedStage(stage.name).outdir, `PlantStore-${stage.name}.template.json`);
  const allStages = Object.values(stages);
  let matches: CfnLintMatch[] = [];

  beforeAll(() => {
    // One run for every template: cfn-lint's start-up is most of its time.
    const run = spawnSync(
      findPythonTool('cfn-lint'),
      ['--format', 'json', '--', ...allStages.map(templateOf)],
      { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
    if (run.error !== undefined) throw run.error;
    matches = JSON.parse(run.stdout || '[]') as CfnLintMatch[];
  }, 180_000);

  it('finds no error in any stage template', () => {
    const errors = matches.filter((match) => match.Level === 'Error');
    expect(errors.map((match) => `${match.Rule.Id} ${match.Message}`)).toEqual([]);
  });

  it('ignores exactly the listed rules, each on its one resource type, with a reason', () => {
    const listed = Object.values(cfnLintExceptions);
    for (const stage of allStages) {
      const template = JSON.parse(readFileSync(templateOf(stage), 'utf8')) as {
        Resources: Record<string, { Type: string; Metadata?: Record<string, unknown> }>;
      };
      const ignored = Object.values(template.Resources).flatMap((resource) => {
        const config = resource.Metadata?.['cfn-lint'] as
          | { config?: { ignore_checks?: string[] } }
          | undefined;
        return (config?.config?.ignore_checks ?? []).map((rule) => `${resource.Type} ${rule}`);
      });
      expect(ignored.sort()).toEqual(
        listed.map((exception) => `${exception.resourceType} ${exception.rule}`).sort(),
      );
    }
    for (const exception of listed) {
      expect(exception.reason.length).toBeGreaterThan(80);
      expect(exception.reference).toMatch(/^https:\/\/docs\.aws\.amazon\.com\//);
    }
  });
});
