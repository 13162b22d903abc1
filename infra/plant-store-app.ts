import { CfnGuardValidator } from '@cdklabs/cdk-validator-cfnguard';
import { App, type AppProps, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { formatStackName, PlantStoreStack } from './plant-store-stack.ts';
import { checkDeploymentTarget, resolveStageConfig, type StageConfig, stages } from './stages.ts';

/**
 * What checks a synth: cdk-nag's AwsSolutions and Serverless packs (in process) and cfn-guard's
 * Control Tower rules (a binary the package ships, seconds per template).
 */
export type SynthCheck = 'cdk-nag' | 'cfn-guard';

/** The app and its stacks, as `infra/app.ts` and the tests build them. */
export interface PlantStoreApp {
  readonly app: App;
  /** The first stage's stack (the only one, unless the context names several). */
  readonly stack: PlantStoreStack;
  readonly stacks: readonly PlantStoreStack[];
}

/**
 * Builds the Plant Store CDK app for the stages named by the `stage` context value (`-c
 * stage=<name>`, default `dev`; `-c stage=dev,prod` for one assembly the pipeline promotes from
 * stage to stage), with cdk-nag's AwsSolutions and Serverless packs and cfn-guard's Control Tower
 * rules checking every synth: an unacknowledged finding fails it.
 *
 * @throws UnknownStageError when the stage is not one of `infra/stages.ts`.
 * @throws WrongDeploymentTargetError when a pinned stage meets another account or region.
 */
export function createPlantStoreApp(
  props: AppProps = {},
  {
    knownStages = stages,
    environment = process.env,
    checks = ['cdk-nag', 'cfn-guard'],
  }: {
    /** The stages to choose from (tests add their own). */
    readonly knownStages?: Readonly<Record<string, StageConfig>>;
    /** Where the CDK CLI's `CDK_DEFAULT_ACCOUNT` and `CDK_DEFAULT_REGION` are read. */
    readonly environment?: Record<string, string | undefined>;
    /**
     * Which checks run on the synth. Both for the CLI; tests that only read the template leave
     * them to the test files that read their report.
     */
    readonly checks?: readonly SynthCheck[];
  } = {},
): PlantStoreApp {
  const app = new App(props);
  const context: unknown = app.node.tryGetContext('stage');
  const names = typeof context === 'string' ? context.split(',').map((name) => name.trim()) : [];
  const stacks = (names.length === 0 ? [undefined] : names).map((name) => {
    const stage = resolveStageConfig(name, knownStages);
    checkDeploymentTarget(stage, environment);
    return new PlantStoreStack(app, formatStackName(stage.name), {
      stage,
      description: `Plant Store (${stage.name}): the plants API, its authorizer and webhooks.`,
      // Environment-agnostic unless the stage pins its account and region: synth needs no
      // credentials and does no lookups; the deploy takes the account and region of the caller's
      // AWS profile, and the CDK refuses to deploy a pinned stack anywhere else.
      ...(stage.account === undefined && stage.region === undefined
        ? {}
        : { env: { account: stage.account, region: stage.region } }),
      tags: { project: 'plant-store', stage: stage.name },
    });
  });
  addSynthChecks(app, checks);
  return { app, stack: stacks[0] as PlantStoreStack, stacks };
}

/** Adds the checks every synth of an app runs (`checks`: both, for the CLI). */
export function addSynthChecks(
  app: App,
  checks: readonly SynthCheck[] = ['cdk-nag', 'cfn-guard'],
): void {
  if (checks.includes('cdk-nag')) {
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
  }
  if (checks.includes('cfn-guard')) {
    // The Control Tower rules, run offline by the cfn-guard binary the package ships.
    Validations.of(app).addPlugins(
      new CfnGuardValidator({ controlTowerRulesEnabled: true, maxBuffer: 16 * 1024 * 1024 }),
    );
  }
}
