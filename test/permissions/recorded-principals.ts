/**
 * What the permissions tier evaluates: the recorded calls of each tier, and the principals that
 * can make them, each with its policies as deployed (the stages' roles per deployment, whose
 * physical names differ, and the pipeline's roles from `PlantStore-Pipeline`).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template as AssertedTemplate } from 'aws-cdk-lib/assertions';
import { PipelineAccessStack } from '../../infra/pipeline-access.ts';
import type { RecordedCall } from '../../local/ministack/aws-call-recorder.ts';
import type { RecordedStack } from '../../local/ministack/ministack.ts';
import { ensureSynthesizedAssembly } from '../support/synthesized-assembly.ts';
import { recordedAccount, recordedRegion, recordingsDirectory } from './recordings.ts';
import {
  type RolePolicies,
  type StackPolicies,
  stackPolicies,
  type Template,
} from './template-policies.ts';

export type TieredCall = RecordedCall & { readonly tier: string };

/** A role a recorded call can be made by. */
export interface Principal extends RolePolicies {
  /** What the justifications call it: a function's logical id without its hash, or a role name. */
  readonly kind: string;
  readonly resourcePolicies: StackPolicies['resourcePolicies'];
}

/** A recorded call's principal, as `principals` keys it: a function's names its deployment. */
export function principalKey(call: TieredCall): string {
  const [, stackName, functionId] = /^function:([\w-]+)\.(\w+)$/.exec(call.principal) ?? [];
  return stackName === undefined
    ? call.principal
    : `function:${functionId}@${call.tier}/${stackName}`;
}

/** The roles of `template` as deployed (`physical`: logical id to physical id), keyed. */
function principalsOf(
  template: Template,
  physical: ReadonlyMap<string, string>,
  deployment: string,
): [string, Principal][] {
  const policies = stackPolicies(template, physical);
  const byRole = new Map([...policies.functionRoles].map(([fn, role]) => [role, fn]));
  return [...policies.roles].map(([roleId, role]) => {
    const functionId = byRole.get(roleId);
    const kind =
      deployment === 'pipeline'
        ? (physical.get(roleId) ?? roleId)
        : (functionId ?? roleId).replace(/[0-9A-F]{8}$/, '');
    const key = functionId === undefined ? role.roleArn : `function:${functionId}@${deployment}`;
    return [key, { ...role, kind, resourcePolicies: policies.resourcePolicies }];
  });
}

/** The recordings of `tiers`; fails with how to make them where one is missing. */
export function loadRecordings(tiers: readonly string[]) {
  const missing = tiers.filter(
    (tier) => !existsSync(path.join(recordingsDirectory, `${tier}.jsonl`)),
  );
  if (missing.length > 0) {
    throw new Error(
      `No recorded AWS calls of ${missing.join(', ')}: run npm run test:deployed and npm run test:delivery first.`,
    );
  }
  const calls: TieredCall[] = tiers.flatMap((tier) =>
    readFileSync(path.join(recordingsDirectory, `${tier}.jsonl`), 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => ({ ...(JSON.parse(line) as RecordedCall), tier })),
  );
  const principals = new Map<string, Principal>();
  /** The tags resources carry in AWS, by ARN (what `aws:ResourceTag` conditions read). */
  const resourceTags = new Map<string, Record<string, string>>();
  // The policies as the app synthesizes them now, named as the recording's deployment named
  // them: a grant taken out since the recording fails the tier at once.
  const synthesized = ensureSynthesizedAssembly();
  const stackFiles = readdirSync(recordingsDirectory).filter((name) =>
    name.endsWith('.stack.json'),
  );
  for (const file of stackFiles) {
    const tier = file.split('.')[0] as string;
    const stack = JSON.parse(
      readFileSync(path.join(recordingsDirectory, file), 'utf8'),
    ) as RecordedStack;
    const current = path.join(synthesized, `${stack.stackName}.template.json`);
    const template = (
      existsSync(current) ? JSON.parse(readFileSync(current, 'utf8')) : stack.template
    ) as Template;
    const physical = new Map(
      stack.resources.map((resource) => [
        resource.LogicalResourceId ?? '',
        resource.PhysicalResourceId ?? '',
      ]),
    );
    for (const [key, principal] of principalsOf(template, physical, `${tier}/${stack.stackName}`)) {
      principals.set(key, principal);
    }
    for (const [id, resource] of Object.entries(template.Resources)) {
      if (resource.Type !== 'AWS::Cognito::UserPool') continue;
      resourceTags.set(
        `arn:aws:cognito-idp:${recordedRegion}:${recordedAccount}:userpool/${physical.get(id)}`,
        (resource.Properties?.UserPoolTags ?? {}) as Record<string, string>,
      );
    }
  }
  // The pipeline's roles, by the names the stack gives them.
  const pipeline = AssertedTemplate.fromStack(
    new PipelineAccessStack(new App(), 'PlantStore-Pipeline'),
  ).toJSON() as Template;
  const roleNames = new Map(
    Object.entries(pipeline.Resources)
      .filter(([, resource]) => resource.Type === 'AWS::IAM::Role')
      .map(([id, resource]) => [id, String(resource.Properties?.RoleName)]),
  );
  for (const [key, principal] of principalsOf(pipeline, roleNames, 'pipeline')) {
    principals.set(key, principal);
  }
  return { calls, principals, resourceTags };
}
