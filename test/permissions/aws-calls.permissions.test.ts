/**
 * The permissions tier (`npm run test:permissions`, after the tiers that record). No emulator here
 * enforces IAM, so every AWS call the deployed and delivery tiers and `npm run emulator` made on
 * MiniStack, recorded as sent (`local/ministack/aws-call-recorder.ts`), is evaluated against the
 * synthesized templates' identity and resource policies by an IAM policy simulator
 * (`@cloud-copilot/iam-simulate`, test-only: AGPL-3.0). A denied call fails the tier; so does a
 * granted action that no recorded call uses, unless `unused-grants.ts` says why it stays.
 */
import { getDenialReasons, runSimulation } from '@cloud-copilot/iam-simulate';
import { describe, expect, it } from '@jest/globals';
import {
  loadRecordings,
  type Principal,
  principalKey,
  type TieredCall,
} from './recorded-principals.ts';
import { recordedAccount } from './recordings.ts';
import {
  type PolicyDocument,
  resourcePolicyOf,
  withEncryptionContextDecided,
} from './template-policies.ts';
import { justifiedUnusedGrants, needsNoPermission } from './unused-grants.ts';

const { calls, principals, resourceTags } = loadRecordings(['deployed', 'emulator', 'delivery']);

const isCdkBootstrapRole = (principal: string) =>
  /:role\/cdk-[a-z0-9]+-[a-z-]+-role-/.test(principal);
/** The calls of the templates' principals: not the operator's own, nor CDK's bootstrap roles'. */
const evaluated = calls.filter(
  (call) =>
    call.principal !== 'operator' &&
    !isCdkBootstrapRole(call.principal) &&
    !needsNoPermission.includes(call.action),
);

describe('every AWS call the tiers recorded', () => {
  it('was made by a principal the templates define, as an action IAM names', () => {
    const byTier = Object.entries(Object.groupBy(calls, (call) => call.tier));
    console.info(
      `Recorded ${calls.length} AWS calls (${byTier.map(([tier, list]) => `${tier} ${list?.length}`).join(', ')}); ${evaluated.length} by the templates' principals.`,
    );
    const operator = new Set(
      calls.filter((call) => call.principal === 'operator').map((call) => call.action),
    );
    console.info(`The operator's own calls (tests, npm run emulator): ${[...operator].sort()}`);
    const unknown = evaluated.filter(
      (call) => !principals.has(principalKey(call)) || /\s/.test(call.action),
    );
    expect(unknown.map((call) => `${call.principal} ${call.action} (${call.run})`)).toEqual([]);
  });

  it('is allowed by the identity and resource policies of the synthesized templates', async () => {
    const distinct = new Map<string, TieredCall & { resource: string }>();
    for (const call of evaluated) {
      for (const resource of call.resources) {
        const context = JSON.stringify(call.context ?? {});
        distinct.set(`${principalKey(call)} ${call.action} ${resource} ${context}`, {
          ...call,
          resource,
        });
      }
    }
    const denied: string[] = [];
    for (const [key, call] of distinct) {
      const principal = principals.get(principalKey(call));
      if (principal === undefined) continue;
      const outcome = await simulate(principal, call);
      if (outcome !== 'Allowed') denied.push(`${key} (${call.run}): ${outcome}`);
    }
    console.info(`${distinct.size} distinct calls evaluated, ${denied.length} denied.`);
    expect(denied).toEqual([]);
  });

  it('uses every action the policies grant, or the grant is justified', () => {
    // By kind of principal: a grant is used if any stage's function of that kind used it.
    const used = new Map<string, string[]>();
    for (const call of evaluated) {
      const kind = principals.get(principalKey(call))?.kind ?? '';
      used.set(kind, [...(used.get(kind) ?? []), call.action.toLowerCase()]);
    }
    const unused = new Set<string>();
    for (const principal of principals.values()) {
      for (const action of grantedActions(principal)) {
        const pattern = new RegExp(`^${action.toLowerCase().replaceAll('*', '.*')}$`);
        if (!(used.get(principal.kind) ?? []).some((one) => pattern.test(one))) {
          unused.add(`${principal.kind} ${action}`);
        }
      }
    }
    const reasonFor = (grant: string) =>
      justifiedUnusedGrants[grant] ?? justifiedUnusedGrants[`* ${grant.split(' ')[1]}`];
    const report = [...unused].sort();
    // One line a reason: the principals it covers, then why.
    const byReason = Map.groupBy(report, (grant) => reasonFor(grant) ?? 'NOT JUSTIFIED');
    console.info(
      `Granted, and used by no recorded call (${report.length}):\n${[...byReason]
        .map(([reason, grants]) => `  ${grants.join(', ')}\n    ${reason}`)
        .join('\n')}`,
    );
    expect(report.filter((grant) => reasonFor(grant) === undefined)).toEqual([]);
    // A justification whose grant is gone is stale. (One whose grant a run happened to use
    // stays: whether a stream batch holds one event or several is the run's, not the code's.)
    const granted = [...principals.values()].flatMap((principal) =>
      grantedActions(principal).map((action) => `${principal.kind} ${action}`),
    );
    const stale = Object.keys(justifiedUnusedGrants).filter((grant) =>
      grant.startsWith('* ')
        ? !granted.some((one) => one.endsWith(` ${grant.slice(2)}`))
        : !granted.includes(grant),
    );
    expect(stale).toEqual([]);
  });
});

function grantedActions(principal: Principal): string[] {
  return principal.identity.flatMap(({ policy }) =>
    policy.Statement.filter((statement) => statement.Effect === 'Allow').flatMap(
      (statement) => [statement.Action ?? []].flat() as string[],
    ),
  );
}

/**
 * The trust of a CDK bootstrap role, as aws-cdk's bootstrap template writes it
 * (`lib/api/bootstrap/bootstrap-template.yaml`): the account's principals may assume it and tag
 * the session. `undefined` for any other resource.
 */
function bootstrapRoleTrust(resource: string): PolicyDocument | undefined {
  if (!isCdkBootstrapRole(resource)) return undefined;
  return {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Principal: { AWS: `arn:aws:iam::${recordedAccount}:root` },
        Action: ['sts:AssumeRole', 'sts:TagSession'],
      },
    ],
  };
}

/** What AWS would answer `principal` asking `action` on `resource`: `Allowed`, or why not. */
async function simulate(
  principal: Principal,
  { action, resource, context }: TieredCall & { resource: string },
): Promise<string> {
  const resourcePolicy =
    resourcePolicyOf(principal.resourcePolicies, resource) ?? bootstrapRoleTrust(resource);
  // AWS asks a key's policy and a role's trust as well as the caller's own: without them the
  // simulator would answer from the identity policy alone.
  if (resourcePolicy === undefined && (action.startsWith('kms:') || action === 'sts:AssumeRole')) {
    return 'not evaluated: the resource policy AWS also asks is not known';
  }
  const tags = Object.entries(resourceTags.get(resource) ?? {});
  const result = await runSimulation(
    {
      request: {
        principal: principal.roleArn,
        action,
        resource: { resource, accountId: recordedAccount },
        // What AWS sets on every call of these principals: over TLS, by the role, in the account.
        contextVariables: {
          'aws:SecureTransport': 'true',
          'aws:PrincipalArn': principal.roleArn,
          'aws:PrincipalAccount': recordedAccount,
          ...Object.fromEntries(tags.map(([tag, value]) => [`aws:ResourceTag/${tag}`, value])),
          ...context,
        },
      },
      identityPolicies: principal.identity.map(({ name, policy }) => ({
        name,
        policy: withEncryptionContextDecided(policy, context),
      })),
      serviceControlPolicies: [],
      resourceControlPolicies: [],
      ...(resourcePolicy === undefined ? {} : { resourcePolicy }),
    },
    {},
  );
  if (result.resultType === 'error') return `not evaluated: ${JSON.stringify(result.errors)}`;
  if (result.overallResult === 'Allowed') return 'Allowed';
  const analysis =
    result.resultType === 'single' ? result.result.analysis : result.results[0]?.analysis;
  const reasons = analysis === undefined ? [] : getDenialReasons(analysis);
  return `${result.overallResult} ${JSON.stringify(reasons)}`;
}
