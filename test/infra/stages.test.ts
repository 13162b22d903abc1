import { describe, expect, it } from '@jest/globals';
import { createPlantStoreApp } from '../../infra/plant-store-app.ts';
import {
  defaultStageName,
  resolveStageConfig,
  stages,
  UnknownStageError,
} from '../../infra/stages.ts';

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
