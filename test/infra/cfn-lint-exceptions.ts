/**
 * The cfn-lint rules the templates ignore, each with where, why and AWS's reference; the
 * integration tier holds every template to this list.
 */
export interface CfnLintException {
  /** The rule, as cfn-lint names it. */
  readonly rule: string;
  /** The only resource type it is ignored on (always one resource, never the template). */
  readonly resourceType: string;
  readonly reason: string;
  /** The AWS documentation that shows the template is right. */
  readonly reference: string;
}

/** None today (cfn-lint 1.58 knows the user pool's `IssuerConfiguration`). */
export const cfnLintExceptions: Readonly<Record<string, CfnLintException>> = {};
