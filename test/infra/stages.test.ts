import { describe, expect, it } from '@jest/globals';
import { createPlantStoreApp } from '../../infra/plant-store-app.ts';
import {
  checkDeploymentTarget,
  defaultStageName,
  resolveStageConfig,
  type StageConfig,
  stages,
  UnknownStageError,
  WrongDeploymentTargetError,
} from '../../infra/stages.ts';

const pinned: StageConfig = {
  ...stages.prod,
  name: 'pinned',
  account: '111111111111',
  region: 'eu-west-1',
};

describe('stages', () => {
  it('defaults to dev', () => {
    expect(defaultStageName).toBe('dev');
    expect(resolveStageConfig()).toBe(stages.dev);
  });

  it('rejects an unknown stage with a message naming the known ones', () => {
    expect(() => resolveStageConfig('qa')).toThrow(UnknownStageError);
    expect(() => resolveStageConfig('qa')).toThrow('Unknown stage "qa". Known stages: dev, prod');
    // Inherited object keys are not stages.
    expect(() => resolveStageConfig('toString')).toThrow(UnknownStageError);
  });

  it('rejects -c stage=<unknown> before building anything', () => {
    expect(() => createPlantStoreApp({ context: { stage: 'qa' } })).toThrow(UnknownStageError);
  });

  describe('pinned to an account and region', () => {
    const app = (environment: Record<string, string>) => () =>
      createPlantStoreApp(
        { context: { stage: 'pinned' } },
        { knownStages: { pinned }, environment },
      );

    it('refuses credentials of another account before building anything, naming both', () => {
      expect(app({ CDK_DEFAULT_ACCOUNT: '222222222222', CDK_DEFAULT_REGION: 'eu-west-1' })).toThrow(
        new WrongDeploymentTargetError(
          'Stage pinned deploys only to account 111111111111, but the credentials are for account 222222222222. Nothing was changed.',
        ),
      );
    });

    it('refuses another region', () => {
      expect(app({ CDK_DEFAULT_ACCOUNT: '111111111111', CDK_DEFAULT_REGION: 'us-east-1' })).toThrow(
        'Stage pinned deploys only to region eu-west-1, but the current region is us-east-1.',
      );
    });

    it('lets the right account and region through, and a synth without credentials', () => {
      expect(() =>
        checkDeploymentTarget(pinned, {
          CDK_DEFAULT_ACCOUNT: '111111111111',
          CDK_DEFAULT_REGION: 'eu-west-1',
        }),
      ).not.toThrow();
      expect(() => checkDeploymentTarget(pinned, {})).not.toThrow();
      expect(() =>
        checkDeploymentTarget(stages.dev, { CDK_DEFAULT_ACCOUNT: '222222222222' }),
      ).not.toThrow();
    });
  });

  it('keeps production data and logs longer in prod, and may destroy dev', () => {
    expect(stages.prod.productionLike).toBe(true);
    expect(stages.dev.productionLike).toBe(false);
    expect(stages.prod.logRetentionDays).toBeGreaterThan(stages.dev.logRetentionDays);
  });

  it.each(Object.values(stages))(
    '$name throttles with a burst at least as large as the rate',
    (stage) => {
      expect(stage.throttling.rateLimit).toBeGreaterThan(0);
      expect(stage.throttling.burstLimit).toBeGreaterThanOrEqual(stage.throttling.rateLimit);
      expect(stage.name).toMatch(/^[a-z][a-z0-9-]*$/);
    },
  );
});
