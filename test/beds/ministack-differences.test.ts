/**
 * MiniStack's differences in their one place, over the stages as synthesized: what each removes
 * or changes, and nothing else. (The deployed and delivery tiers deploy what is left.)
 */
import { expect, it } from '@jest/globals';
import { adaptTemplateToMiniStack } from '../../local/ministack/ministack-differences.ts';
import { synthesizedStages } from '../infra/synthesized-stages.ts';

type Resource = { Type: string; UpdatePolicy?: Record<string, unknown> };
const synthesizedStage = synthesizedStages();
const templateOf = (stage: string) =>
  structuredClone(synthesizedStage(stage).template.toJSON()) as {
    Resources: Record<string, Resource>;
  };

it('takes CodeDeploy out of prod: its applications and deployment groups, and the aliases’ update policy', () => {
  const template = templateOf('prod');
  const original = templateOf('prod');
  const codeDeploy = Object.entries(original.Resources).filter(([, resource]) =>
    resource.Type.startsWith('AWS::CodeDeploy::'),
  );
  const aliases = Object.entries(original.Resources).filter(
    ([, resource]) => resource.UpdatePolicy?.CodeDeployLambdaAliasUpdate !== undefined,
  );
  // One application and deployment group for each function behind the canary.
  expect(codeDeploy).toHaveLength(2 * aliases.length);
  expect(aliases.length).toBeGreaterThanOrEqual(16);

  const differences = adaptTemplateToMiniStack(template);
  const noCodeDeploy = 'MiniStack has no CodeDeploy: a new version is live at once, with no canary';
  expect(
    differences.filter((difference) => difference.reason === noCodeDeploy).map((d) => d.resource),
  ).toEqual(expect.arrayContaining([...codeDeploy, ...aliases].map(([id]) => id)));
  for (const [id] of codeDeploy) expect(template.Resources[id]).toBeUndefined();
  for (const [id] of aliases) {
    expect(template.Resources[id]?.Type).toBe('AWS::Lambda::Alias');
    expect(template.Resources[id]?.UpdatePolicy).toBeUndefined();
  }
  // Nothing else refers to what went.
  const left = JSON.stringify(template);
  for (const [id] of codeDeploy) expect(left).not.toContain(`"${id}"`);
});

it('changes nothing of dev that its gradual deployments would, since it has none', () => {
  const differences = adaptTemplateToMiniStack(templateOf('dev'));
  expect(differences.some((difference) => difference.reason.includes('CodeDeploy'))).toBe(false);
});
