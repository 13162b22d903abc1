/**
 * `PlantStore-Pipeline`, deployed once per account (docs/deploying.md): GitHub's OIDC provider and
 * the roles the workflow assumes, each trusting only this repository's runs in its environment
 * (or its pull requests) and assuming only the CDK bootstrap roles it needs.
 */
import { Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { CfnOIDCProvider, PolicyStatement, Role, WebIdentityPrincipal } from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { deployRoleName, diffRoleName, pipeline } from './pipeline.ts';

/** GitHub's OIDC issuer, and the audience its tokens carry for AWS. */
export const githubIssuer = 'token.actions.githubusercontent.com';
const audience = 'sts.amazonaws.com';

export interface PipelineAccessProps extends StackProps {
  /** The account's GitHub OIDC provider, where it has one already (an account holds one). */
  readonly existingProviderArn?: string;
}

export class PipelineAccessStack extends Stack {
  constructor(scope: Construct, id: string, props: PipelineAccessProps = {}) {
    super(scope, id, props);
    const providerArn =
      props.existingProviderArn ??
      new CfnOIDCProvider(this, 'GitHubOidc', {
        url: `https://${githubIssuer}`,
        clientIdList: [audience],
      }).attrArn;
    const bootstrapRole = (kind: string) =>
      `arn:${this.partition}:iam::${this.account}:role/cdk-${pipeline.bootstrapQualifier}-${kind}-role-${this.account}-${this.region}`;
    const role = (id: string, roleName: string, subject: string, kinds: readonly string[]) => {
      const created = new Role(this, id, {
        roleName,
        description: `Plant Store delivery: assumed by ${pipeline.repository} (${subject}).`,
        assumedBy: new WebIdentityPrincipal(providerArn, {
          StringEquals: {
            [`${githubIssuer}:aud`]: audience,
            [`${githubIssuer}:sub`]: `repo:${pipeline.repository}:${subject}`,
          },
        }),
      });
      created.addToPolicy(
        new PolicyStatement({ actions: ['sts:AssumeRole'], resources: kinds.map(bootstrapRole) }),
      );
      return created;
    };
    for (const stage of pipeline.stages) {
      const deployRole = role(`Deploy-${stage}`, deployRoleName(stage), `environment:${stage}`, [
        'deploy',
        'file-publishing',
        'lookup',
      ]);
      this.allowSmoke(deployRole, stage);
    }
    // `cdk diff` reads the deployed template with the lookup role (read-only).
    role('Diff', diffRoleName, 'pull_request', ['lookup']);
  }

  /**
   * What `npm run smoke` calls with the deploy job's own credentials: the stack's outputs and its
   * app client's secret, in the stage's pool only (tagged with its stage). The permissions tier
   * holds this to the calls the smoke makes.
   */
  private allowSmoke(deployRole: Role, stage: string): void {
    const stackArn = `arn:${this.partition}:cloudformation:${this.region}:${this.account}:stack/PlantStore-${stage}/*`;
    const poolArn = `arn:${this.partition}:cognito-idp:${this.region}:${this.account}:userpool/*`;
    deployRole.addToPolicy(
      new PolicyStatement({ actions: ['cloudformation:DescribeStacks'], resources: [stackArn] }),
    );
    deployRole.addToPolicy(
      new PolicyStatement({
        actions: ['cognito-idp:DescribeUserPoolClient'],
        resources: [poolArn],
        conditions: { StringEquals: { 'aws:ResourceTag/stage': stage } },
      }),
    );
    const resource = (arn: string) =>
      `Resource::${arn.replace(/\$\{Token\[AWS\.(\w+)\.\d+\]\}/g, '<AWS::$1>')}`;
    Validations.of(deployRole).acknowledge(
      {
        id: `AwsSolutions::AwsSolutions-IAM5[${resource(stackArn)}]`,
        reason: "A stack's ARN ends in an id CloudFormation makes: the stage's stack by its name.",
      },
      {
        id: `AwsSolutions::AwsSolutions-IAM5[${resource(poolArn)}]`,
        reason:
          "The pool's id is made by the stage's stack: the pool that stack tags with the stage.",
      },
    );
  }
}
