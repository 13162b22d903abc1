/**
 * The stage's web ACL: per-token limits with AWS WAF rate-based rules, keyed on the
 * `Authorization` header, refused with the contract's 429 before API Gateway (`throttling.ts`).
 */
import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { type TokenLimit, tokenLimitResponse, tokenLimitWindowSeconds } from './throttling.ts';

export interface TokenRateLimitsProps {
  readonly stageName: string;
  readonly limits: readonly TokenLimit[];
  /** The API stage the web ACL protects. */
  readonly stageArn: string;
  readonly allowedOrigins: readonly string[];
}

const answerBodyKey = 'too-many-requests';

export class TokenRateLimits extends Construct {
  constructor(scope: Construct, id: string, props: TokenRateLimitsProps) {
    super(scope, id);
    const answer = tokenLimitResponse(props.allowedOrigins);
    const { 'Content-Type': _contentType, ...headers } = answer.headers;
    const visibility = (name: string) => ({
      cloudWatchMetricsEnabled: true,
      metricName: `PlantStore-${props.stageName}-${name}`,
      sampledRequestsEnabled: true,
    });
    const webAcl = new CfnWebACL(this, 'WebAcl', {
      name: `plant-store-${props.stageName}`,
      description: 'Plant Store per-client limits: requests per bearer token and minute.',
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      visibilityConfig: visibility('WebAcl'),
      customResponseBodies: {
        [answerBodyKey]: { contentType: 'APPLICATION_JSON', content: answer.body },
      },
      rules: props.limits.map((limit, priority) => ({
        name: `per-token-${limit.group}`,
        priority,
        action: {
          block: {
            customResponse: {
              responseCode: answer.statusCode,
              customResponseBodyKey: answerBodyKey,
              responseHeaders: Object.entries(headers).map(([name, value]) => ({ name, value })),
            },
          },
        },
        statement: {
          rateBasedStatement: {
            limit: limit.requestsPerWindow,
            evaluationWindowSec: tokenLimitWindowSeconds,
            aggregateKeyType: 'CUSTOM_KEYS',
            customKeys: [
              {
                header: {
                  name: 'authorization',
                  textTransformations: [{ priority: 0, type: 'NONE' }],
                },
              },
            ],
            scopeDownStatement: {
              byteMatchStatement: {
                searchString: limit.pathContains,
                fieldToMatch: { uriPath: {} },
                // `/%70lants` is `/plants` too.
                textTransformations: [{ priority: 0, type: 'URL_DECODE' }],
                positionalConstraint: 'CONTAINS',
              },
            },
          },
        },
        visibilityConfig: visibility(`PerToken-${limit.group}`),
      })),
    });
    new CfnWebACLAssociation(this, 'Association', {
      resourceArn: props.stageArn,
      webAclArn: webAcl.attrArn,
    });
  }
}
