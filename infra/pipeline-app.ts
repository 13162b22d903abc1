/** The pipeline's access stack as its own app (`npm run pipeline:deploy`), checked as the stages. */
import { App } from 'aws-cdk-lib';
import { PipelineAccessStack } from './pipeline-access.ts';
import { addSynthChecks } from './plant-store-app.ts';

const app = new App();
const existingProviderArn: unknown = app.node.tryGetContext('githubOidcProviderArn');
new PipelineAccessStack(app, 'PlantStore-Pipeline', {
  ...(typeof existingProviderArn === 'string' ? { existingProviderArn } : {}),
  description: 'Plant Store delivery: GitHub OIDC and the roles its workflow assumes.',
  tags: { project: 'plant-store' },
});
addSynthChecks(app);
app.synth();
