import { CfnGuardValidator } from '@cdklabs/cdk-validator-cfnguard';
import { App, type AppProps, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { formatStackName, PlantStoreStack } from './plant-store-stack.ts';
import { resolveStageConfig } from './stages.ts';

/** The app and its one stack, as `infra/app.ts` and the tests build them. */
export interface PlantStoreApp {
  readonly app: App;
  readonly stack: PlantStoreStack;
}

/**
 * Builds the Plant Store CDK app for the stage named by the `stage` context value (`-c
 * stage=<name>`, default `dev`), with the cdk-nag AwsSolutions and Serverless packs checking
 * every synth: an unacknowledged finding fails it.
 *
 * @throws UnknownStageError when the stage is not one of `infra/stages.ts`.
 */
export function createPlantStoreApp(props: AppProps = {}): PlantStoreApp {
  const app = new App(props);
  const stageName: unknown = app.node.tryGetContext('stage');
  const stage = resolveStageConfig(typeof stageName === 'string' ? stageName : undefined);
  const stack = new PlantStoreStack(app, formatStackName(stage.name), {
    stage,
    description: `Plant Store (${stage.name}): POST /plants behind a bearer-token authorizer.`,
    // Environment-agnostic on purpose: synth needs no credentials and does no lookups; the
    // deploy takes the account and region of the caller's AWS profile.
    tags: { project: 'plant-store', stage: stage.name },
  });
  Validations.of(app).addPlugins(
    new AwsSolutionsChecks(app),
    new ServerlessChecks(app),
    // The Control Tower rules, run offline by the cfn-guard binary the package ships.
    new CfnGuardValidator({ controlTowerRulesEnabled: true, maxBuffer: 16 * 1024 * 1024 }),
  );
  return { app, stack };
}
