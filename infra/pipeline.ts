/**
 * The delivery pipeline's settings, held to `.github/workflows/delivery.yml` by a test: the
 * trusted repository and the stages in order, each a GitHub environment (docs/deploying.md).
 */
import type { StageName } from './stages.ts';

export const pipeline = {
  /** The GitHub repository (`owner/name`) whose workflow runs are trusted. */
  repository: 'plant-store/plant-store',
  /** The stages, in the order a commit reaches them; each job runs in the environment named so. */
  stages: ['dev', 'prod'] as const satisfies readonly StageName[],
  /** The CDK bootstrap qualifier of the accounts deployed to (the CDK's default). */
  bootstrapQualifier: 'hnb659fds',
} as const;

/** The role a stage's deploy job assumes. */
export function deployRoleName(stage: string): string {
  return `plant-store-deploy-${stage}`;
}

/** The role a pull request's `cdk diff` assumes: it may read, never change. */
export const diffRoleName = 'plant-store-diff';
