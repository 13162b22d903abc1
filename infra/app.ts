/**
 * The CDK app (`cdk.json` runs `node infra/app.ts`): `npx cdk synth|deploy -c stage=<name>`.
 */
import { createPlantStoreApp } from './plant-store-app.ts';
import { UnknownStageError } from './stages.ts';

try {
  createPlantStoreApp().app.synth();
} catch (error) {
  if (!(error instanceof UnknownStageError)) throw error;
  // A mistyped stage is a usage error: say which stages exist, without a stack trace.
  console.error(error.message);
  process.exitCode = 1;
}
