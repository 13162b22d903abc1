/** The CDK app (`cdk.json`): `npx cdk synth|deploy -c stage=<name>`. */
import { createPlantStoreApp } from './plant-store-app.ts';
import { UnknownStageError, WrongDeploymentTargetError } from './stages.ts';

try {
  createPlantStoreApp().app.synth();
} catch (error) {
  if (!(error instanceof UnknownStageError || error instanceof WrongDeploymentTargetError)) {
    throw error;
  }
  // A mistyped stage or the wrong credentials are usage errors: say so, without a stack trace.
  console.error(error.message);
  process.exitCode = 1;
}
