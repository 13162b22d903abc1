import { CfnGuardValidator } from '@cdklabs/cdk-validator-cfnguard';
import { App, type AppProps, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { formatStackName, PlantStoreStack } from './plant-store-stack.ts';
import { checkDeploymentTarget, resolveStageConfig, type StageConfig, stages } from './stages.ts';

/** cdk-nag's AwsSolutions and Serverless packs, and cfn-guard's Control Tower rules. */
export type SynthCheck = 'cdk-nag' | 'cfn-guard';
const everyCheck: readonly SynthCheck[] = ['cdk-nag', 'cfn-guard'];

export interface PlantStoreApp {
  readonly app: App;
}

/**
 * The CDK app for the stages of `-c stage=<name>[,<name>…]` (default `dev`), every synth checked
 * by cdk-nag and cfn-guard. @throws UnknownStageError, WrongDeploymentTargetError
 */
export function createPlantStoreApp(
  props: AppProps = {},
  {
    knownStages = stages,
    environment = process.env,
    checks = everyCheck,
  }: {
    readonly knownStages?: Readonly<Record<string, StageConfig>>;
    /** Where `CDK_DEFAULT_ACCOUNT` and `CDK_DEFAULT_REGION` are read. */
    readonly environment?: Record<string, string | undefined>;
    /** Both for the CLI; tests that only read the template leave them out. */
    readonly checks?: readonly SynthCheck[];
  } = {},
): PlantStoreApp {
  const app = new App(props);
  const context: unknown = app.node.tryGetContext('stage');
  const names = typeof context === 'string' ? context.split(',').map((name) => name.trim()) : [];
  for (const name of names.length === 0 ? [undefined] : names) {
    const stage = resolveStageConfig(name, knownStages);
    checkDeploymentTarget(stage, environment);
    new PlantStoreStack(app, formatStackName(stage.name), {
      stage,
      description: `Plant Store (${stage.name}): the plants API, its authorizer and webhooks.`,
      // Environment-agnostic unless the stage pins its account and region.
      ...(stage.account === undefined && stage.region === undefined
        ? {}
        : { env: { account: stage.account, region: stage.region } }),
      tags: { project: 'plant-store', stage: stage.name },
    });
  }
  addSynthChecks(app, checks);
  return { app };
}

/** Adds the checks every synth of an app runs (`checks`: both, for the CLI). */
export function addSynthChecks(app: App, checks = everyCheck): void {
  if (checks.includes('cdk-nag')) {
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
  }
  if (checks.includes('cfn-guard')) {
    Validations.of(app).addPlugins(
      new CfnGuardValidator({ controlTowerRulesEnabled: true, maxBuffer: 16 * 1024 * 1024 }),
    );
  }
}
