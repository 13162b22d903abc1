/**
 * The delivery pipeline says one thing in three places: the workflow
 * (`.github/workflows/delivery.yml`), the access stack's roles (`infra/pipeline-access.ts`) and
 * the stages (`infra/pipeline.ts`, `infra/stages.ts`). Each is held to the others here; the
 * access stack passes cdk-nag like the stage stacks; actionlint and zizmor check the workflow in
 * `npm run test:all`.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AccountRootPrincipal, PolicyStatement, Role } from 'aws-cdk-lib/aws-iam';
import { load } from 'js-yaml';
import { deployRoleName, diffRoleName, pipeline } from '../../infra/pipeline.ts';
import { githubIssuer, PipelineAccessStack } from '../../infra/pipeline-access.ts';
import { addSynthChecks } from '../../infra/plant-store-app.ts';
import { repositoryRoot } from '../../infra/plant-store-function.ts';
import { stages } from '../../infra/stages.ts';

interface Job {
  readonly if?: string;
  readonly needs?: string | string[];
  readonly environment?: string;
  readonly permissions?: Record<string, string>;
  readonly steps: readonly { readonly uses?: string; readonly run?: string }[];
}
const workflowText = readFileSync(
  path.join(repositoryRoot, '.github/workflows/delivery.yml'),
  'utf8',
);
const workflow = load(workflowText) as { permissions: unknown; jobs: Record<string, Job> };
const packageScripts = (
  JSON.parse(readFileSync(path.join(repositoryRoot, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  }
).scripts;

describe('the delivery workflow', () => {
  const deployJobs = Object.entries(workflow.jobs).filter(([, job]) => job.environment);

  it('deploys the pipeline’s stages in order, each in its own environment, each a stage of infra/stages.ts', () => {
    expect(deployJobs.map(([, job]) => job.environment)).toEqual([...pipeline.stages]);
    for (const stage of pipeline.stages) expect(Object.keys(stages)).toContain(stage);
    // dev after the one synth, each next stage after the one before it.
    expect(deployJobs.map(([, job]) => job.needs)).toEqual([
      'synth',
      ...deployJobs.slice(0, -1).map(([name]) => name),
    ]);
    expect(workflow.jobs.synth?.needs).toBe('test');
  });

  it('promotes the one assembly: synthesized once for every stage, deployed from the artifact, then smoked', () => {
    // The assembly's folder: `cdk.out`, or another a rehearsal names (`RELEASE_ASSEMBLY`).
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion in an npm script.
    const assembly = '"${RELEASE_ASSEMBLY:-cdk.out}"';
    expect(packageScripts['release:synth']).toBe(
      `cdk synth -q -c stage=${pipeline.stages.join(',')} -o ${assembly}`,
    );
    expect(packageScripts['release:deploy']).toBe(
      `cdk deploy --app ${assembly} --require-approval never`,
    );
    const runs = (job: Job) => job.steps.flatMap((step) => (step.run ? [step.run] : []));
    expect(runs(workflow.jobs.synth as Job)).toContain('npm run -s release:synth');
    for (const [, job] of deployJobs) {
      expect(job.steps.some((step) => step.uses?.startsWith('actions/download-artifact@'))).toBe(
        true,
      );
      expect(runs(job)).not.toContain('npm run -s release:synth');
      expect(runs(job).slice(-2)).toEqual([
        `npm run -s release:deploy -- PlantStore-${job.environment}`,
        `npm run -s smoke -- --stack PlantStore-${job.environment}`,
      ]);
    }
    // Every step the workflow runs is an npm script (or the CI entry), so another CI runs the same.
    for (const job of Object.values(workflow.jobs)) {
      for (const run of runs(job)) {
        expect(run).toMatch(/^(npm (install|run -s [\w:]+)|bash \.ci\/run|for stage in )/);
      }
    }
    expect(workflowText).toContain(`for stage in ${pipeline.stages.join(' ')}; do`);
  });

  it('gives no job more than it needs: no default permissions, an OIDC token only where AWS is called, every action pinned to a commit', () => {
    expect(workflow.permissions).toEqual({});
    for (const [name, job] of Object.entries(workflow.jobs)) {
      const callsAws = job.steps.some((step) =>
        step.uses?.startsWith('aws-actions/configure-aws-credentials@'),
      );
      expect({ name, permissions: job.permissions }).toEqual({
        name,
        permissions: callsAws ? { contents: 'read', 'id-token': 'write' } : { contents: 'read' },
      });
      for (const step of job.steps) {
        if (step.uses !== undefined) expect(step.uses).toMatch(/^[\w-]+\/[\w-]+@[0-9a-f]{40}$/);
      }
    }
  });
});

describe('the PlantStore-Pipeline stack', () => {
  const app = new App({ outdir: mkdtempSync(path.join(tmpdir(), 'plant-store-pipeline-')) });
  const stack = new PipelineAccessStack(app, 'PlantStore-Pipeline');
  const template = Template.fromStack(stack);
  const roles = Object.values(template.findResources('AWS::IAM::Role'));
  const trustOf = (roleName: string) =>
    roles.find((role) => role.Properties.RoleName === roleName)?.Properties.AssumeRolePolicyDocument
      .Statement;

  it('trusts, for each stage, only this repository’s runs in the stage’s environment, and for the diff only its pull requests', () => {
    const trust = (subject: string) => [
      {
        Action: 'sts:AssumeRoleWithWebIdentity',
        Effect: 'Allow',
        Principal: { Federated: { 'Fn::GetAtt': ['GitHubOidc', 'Arn'] } },
        Condition: {
          StringEquals: {
            [`${githubIssuer}:aud`]: 'sts.amazonaws.com',
            [`${githubIssuer}:sub`]: `repo:${pipeline.repository}:${subject}`,
          },
        },
      },
    ];
    for (const stage of pipeline.stages) {
      expect(trustOf(deployRoleName(stage))).toEqual(trust(`environment:${stage}`));
    }
    expect(trustOf(diffRoleName)).toEqual(trust('pull_request'));
    expect(roles).toHaveLength(pipeline.stages.length + 1);
  });

  it('lets a deploy role assume only the CDK bootstrap roles a deploy needs and read what its smoke reads; the diff role only the lookup role', () => {
    const policies = Object.values(template.findResources('AWS::IAM::Policy'));
    const statementsOf = (roleLogicalId: string) =>
      policies.find((candidate) =>
        candidate.Properties.Roles.some((role: { Ref: string }) => role.Ref === roleLogicalId),
      )?.Properties.PolicyDocument.Statement as Record<string, unknown>[];
    const assumable = (statement: Record<string, unknown> | undefined) => {
      expect(statement?.Action).toBe('sts:AssumeRole');
      return [statement?.Resource]
        .flat()
        .map((arn) => /cdk-hnb659fds-([a-z-]+)-role-/.exec(JSON.stringify(arn))?.[1])
        .sort();
    };
    const logicalIdOf = (roleName: string) =>
      Object.entries(template.findResources('AWS::IAM::Role')).find(
        ([, role]) => role.Properties.RoleName === roleName,
      )?.[0] as string;
    for (const stage of pipeline.stages) {
      const [assume, describeStack, describeClient, ...others] = statementsOf(
        logicalIdOf(deployRoleName(stage)),
      );
      expect(others).toEqual([]);
      expect(assumable(assume)).toEqual(['deploy', 'file-publishing', 'lookup']);
      // `npm run smoke`: the stage's stack, and the app client of the pool tagged with the stage.
      expect(describeStack?.Action).toBe('cloudformation:DescribeStacks');
      expect(JSON.stringify(describeStack?.Resource)).toContain(`:stack/PlantStore-${stage}/*`);
      expect(describeClient).toMatchObject({
        Action: 'cognito-idp:DescribeUserPoolClient',
        Condition: { StringEquals: { 'aws:ResourceTag/stage': stage } },
      });
    }
    const [lookup, ...others] = statementsOf(logicalIdOf(diffRoleName));
    expect(others).toEqual([]);
    expect(assumable(lookup)).toEqual(['lookup']);
  });

  it('passes cdk-nag’s packs with only the smoke’s two reads acknowledged, and reports a role given a wildcard', () => {
    const reportOf = (plant: (stack: PipelineAccessStack) => void) => {
      const checked = new App({
        outdir: mkdtempSync(path.join(tmpdir(), 'plant-store-pipeline-')),
      });
      const checkedStack = new PipelineAccessStack(checked, 'PlantStore-Pipeline');
      plant(checkedStack);
      addSynthChecks(checked, ['cdk-nag']);
      let directory = checked.outdir;
      try {
        directory = checked.synth().directory;
      } catch {
        // A violation fails the synth; its report is written first.
      }
      const report = JSON.parse(
        readFileSync(path.join(directory, 'validation-report.json'), 'utf8'),
      ) as { pluginReports: { pluginName: string; conclusion: string }[] };
      rmSync(directory, { recursive: true, force: true });
      return report.pluginReports.map(({ pluginName, conclusion }) => [pluginName, conclusion]);
    };
    // A plugin reports only what it found or was told to overlook: here the two wildcards of the
    // smoke's reads, each acknowledged with its reason (infra/pipeline-access.ts).
    expect(reportOf(() => {})).toEqual([['AwsSolutions', 'success']]);
    const wildcard = reportOf((checkedStack) => {
      const role = new Role(checkedStack, 'Wildcard', { assumedBy: new AccountRootPrincipal() });
      role.addToPolicy(new PolicyStatement({ actions: ['s3:*'], resources: ['*'] }));
    });
    expect(wildcard).toContainEqual(['AwsSolutions', 'failure']);
  });
});
