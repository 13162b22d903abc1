/**
 * The stages as the CDK CLI synthesizes them (cdk.json's feature flags, the construct paths and
 * asset folders `sam local` reads). Most files read the assembly Jest's global setup made once
 * for the run (bundled, checked by cdk-nag: `test/support/synthesized-assembly.ts`); a file that
 * needs cfn-guard's checks (a binary, seconds a template) synthesizes its own, unbundled, into a
 * temporary folder removed afterwards.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect } from '@jest/globals';
import { Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { createPlantStoreApp } from '../../infra/plant-store-app.ts';
import { repositoryRoot } from '../../infra/plant-store-function.ts';
import { type StageConfig, stages } from '../../infra/stages.ts';
import { assemblyDirectory } from '../support/synthesized-assembly.ts';

/** `createPlant` → `CreatePlant`: a function's construct id, the start of its logical id. */
export function pascalCase(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}

export interface SynthesizedStage {
  /** The cloud assembly folder, shared by the stages of one `synthesizeStages`. */
  readonly outdir: string;
  readonly template: Template;
  /** The checks' report (cdk-nag's packs, cfn-guard), when the synth was checked. */
  readonly validationReport: ValidationReport | undefined;
  /** Every `Validations.acknowledge` in the app: id → reason. */
  readonly acknowledgments: ReadonlyMap<string, string>;
}

export interface ValidationReport {
  readonly pluginReports: readonly {
    readonly pluginName: string;
    readonly conclusion: string;
    readonly violations?: readonly { readonly ruleName: string }[];
    readonly suppressedViolations?: readonly {
      readonly ruleName: string;
      readonly acknowledgedId: string;
      readonly reason: string;
      readonly violatingConstructs: readonly { readonly constructPath: string }[];
    }[];
  }[];
}

/** The CDK CLI's settings, feature flags included, so the tests synthesize what deploys. */
const cdkJson = JSON.parse(readFileSync(path.join(repositoryRoot, 'cdk.json'), 'utf8')) as {
  context: Record<string, unknown>;
};

/** Every `Validations.acknowledge` of a stack, from its metadata in the assembly: id → reason. */
function acknowledgmentsOf(outdir: string, stackName: string): Map<string, string> {
  const metadata = JSON.parse(
    readFileSync(path.join(outdir, `${stackName}.metadata.json`), 'utf8'),
  ) as Record<string, readonly { readonly type: string; readonly data: unknown }[]>;
  const acknowledgments = new Map<string, string>();
  for (const entries of Object.values(metadata)) {
    for (const entry of entries) {
      if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
      for (const [id, reason] of Object.entries(entry.data as Record<string, string>)) {
        acknowledgments.set(id, reason);
      }
    }
  }
  return acknowledgments;
}

/** A stage of an assembly on disk, with the checks report its synth kept. */
function readStage(outdir: string, stageName: string, reportFile: string): SynthesizedStage {
  const stackName = `PlantStore-${stageName}`;
  const template = JSON.parse(
    readFileSync(path.join(outdir, `${stackName}.template.json`), 'utf8'),
  ) as Record<string, unknown>;
  return {
    outdir,
    template: Template.fromJSON(template),
    validationReport: JSON.parse(
      readFileSync(path.join(outdir, reportFile), 'utf8'),
    ) as ValidationReport,
    acknowledgments: acknowledgmentsOf(outdir, stackName),
  };
}

const synthesizedOnce = new Map<string, SynthesizedStage>();

/**
 * The stages of the run's assembly (dev and prod, bundled, checked by cdk-nag), each read when
 * first asked for.
 */
export function synthesizedStages(): (name: string) => SynthesizedStage {
  return (name) => {
    let stage = synthesizedOnce.get(name);
    if (stage === undefined) {
      stage = readStage(assemblyDirectory(), name, `validation-report.${name}.json`);
      synthesizedOnce.set(name, stage);
    }
    return stage;
  };
}

/**
 * Synthesizes the stages checked by cfn-guard's Control Tower rules (unbundled) before the
 * file's tests, and removes them after; the returned function gives a stage's result by name.
 */
export function synthesizeStagesForCfnGuard(
  stagesToSynthesize: readonly StageConfig[] = Object.values(stages),
): (name: string) => SynthesizedStage {
  const synthesized = new Map<string, SynthesizedStage>();
  let outdir: string | undefined;
  beforeAll(() => {
    outdir = mkdtempSync(path.join(tmpdir(), 'plant-store-synth-'));
    for (const stage of stagesToSynthesize) {
      const { app } = createPlantStoreApp(
        {
          outdir,
          context: { ...cdkJson.context, stage: stage.name, 'aws:cdk:bundling-stacks': [] },
        },
        { checks: ['cfn-guard'] },
      );
      app.synth();
      synthesized.set(stage.name, readStage(outdir, stage.name, 'validation-report.json'));
    }
  }, 120_000);
  afterAll(() => {
    if (outdir !== undefined) rmSync(outdir, { recursive: true, force: true });
  });
  return (name) => {
    const result = synthesized.get(name);
    if (result === undefined) throw new Error(`stage ${name} was not synthesized`);
    return result;
  };
}

/** The bundled code of a function, read from the cloud assembly the way SAM finds it. */
export function readBundle(result: SynthesizedStage, logicalIdPrefix: string): string {
  const functions = result.template.findResources('AWS::Lambda::Function');
  const entry = Object.entries(functions).find(([id]) => id.startsWith(logicalIdPrefix));
  const assetPath = entry?.[1].Metadata?.['aws:asset:path'] as string | undefined;
  if (assetPath === undefined) throw new Error(`no bundled asset for ${logicalIdPrefix}`);
  return readFileSync(path.join(result.outdir, assetPath, 'index.mjs'), 'utf8');
}

function reportOf(result: SynthesizedStage): ValidationReport {
  if (result.validationReport === undefined) throw new Error('the synth was not checked');
  return result.validationReport;
}

/**
 * The report, not the synth's exit code: exactly `pluginNames` checked the synth, and none left
 * a violation (once anything is acknowledged, cfn-guard's remaining violations no longer fail a
 * synth).
 */
export function expectNoUnacknowledgedFinding(
  result: SynthesizedStage,
  pluginNames: readonly string[],
): void {
  const { pluginReports } = reportOf(result);
  expect(pluginReports.map((plugin) => plugin.pluginName).sort()).toEqual([...pluginNames].sort());
  for (const plugin of pluginReports) {
    expect(plugin.violations ?? []).toEqual([]);
    expect(plugin.conclusion).toBe('success');
  }
}

/** The findings the checks suppressed are exactly the reviewed rules, each with its reason. */
export function expectAcknowledgedFindings(
  result: SynthesizedStage,
  reviewedRules: readonly string[],
): void {
  const suppressed = reportOf(result).pluginReports.flatMap(
    (plugin) => plugin.suppressedViolations ?? [],
  );
  expect([...new Set(suppressed.map((finding) => finding.ruleName))].sort()).toEqual(
    [...reviewedRules].sort(),
  );
  for (const finding of suppressed) {
    expect(finding.reason.length).toBeGreaterThan(80);
  }
}

/**
 * Every acknowledgment the app makes for the given plugins (ids `<plugin>::<rule>`) suppressed a
 * finding of this synth, and says why: an acknowledgment that matches nothing is a stale one.
 */
export function expectEveryAcknowledgmentUsed(
  result: SynthesizedStage,
  pluginNames: readonly string[],
): void {
  const used = new Set(
    reportOf(result)
      .pluginReports.flatMap((plugin) => plugin.suppressedViolations ?? [])
      .map((finding) => finding.acknowledgedId),
  );
  const acknowledgments = [...result.acknowledgments].filter(([id]) =>
    pluginNames.some((plugin) => id.startsWith(`${plugin}::`)),
  );
  expect(acknowledgments.length).toBeGreaterThan(0);
  for (const [id, reason] of acknowledgments) {
    expect(used).toContain(id.replace(/^Annotation::/i, ''));
    expect(reason.length).toBeGreaterThan(80);
  }
}
