/**
 * The cfn-lint rules the synthesized templates ignore: the one list, each with where, why and
 * AWS's reference. `npm test` runs cfn-lint (AWS's CloudFormation linter) over every stage's
 * template and expects no error, and checks that a template ignores nothing that is not here.
 */
import type { CfnResource } from 'aws-cdk-lib';

export interface CfnLintException {
  /** The rule, as cfn-lint names it. */
  readonly rule: string;
  /** The only resource type it is ignored on (always one resource, never the template). */
  readonly resourceType: string;
  readonly reason: string;
  /** The AWS documentation that shows the template is right. */
  readonly reference: string;
}

export const cfnLintExceptions = {
  userPoolIssuerConfiguration: {
    rule: 'E3002',
    resourceType: 'AWS::Cognito::UserPool',
    reason:
      'cfn-lint 1.51 (installed on these machines) has a resource schema older than the ' +
      "user pool's IssuerConfiguration property, so it reports the property as unknown. " +
      'CloudFormation documents it, and aws-cdk-lib types it (CfnUserPool.issuerConfiguration).',
    reference:
      'https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-properties-cognito-userpool-issuerconfiguration.html',
  },
} as const satisfies Record<string, CfnLintException>;

/** Ignores exactly `exception.rule` on `resource` (cfn-lint reads the resource's Metadata). */
export function ignoreCfnLintRule(resource: CfnResource, exception: CfnLintException): void {
  if (resource.cfnResourceType !== exception.resourceType) {
    throw new Error(
      `cfn-lint ${exception.rule} is ignored on ${exception.resourceType} only, not ${resource.cfnResourceType}.`,
    );
  }
  resource.addMetadata('cfn-lint', { config: { ignore_checks: [exception.rule] } });
}
