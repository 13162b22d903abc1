/**
 * The stage's web ACL: per-client limits in front of the API, with AWS WAF rate-based rules
 * ("Rate-based rule statements", AWS WAF Developer Guide). API Gateway's throttling keeps one
 * bucket per method for every client together, so one client's loop could answer everyone else
 * 429; here each bearer token (the `Authorization` header, the rules' aggregation key) has its own
 * count per group of routes (`tokenLimits` in `throttling.ts`), and what is over it is answered
 * 429 with the contract's error body before API Gateway sees it. Cost: `npm run cost`.
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
  readonly webAcl: CfnWebACL;

  constructor(scope: Construct, id: string, props: TokenRateLimitsProps) {
    super(scope, id);
    const answer = tokenLimitResponse(props.allowedOrigins);
    const { 'Content-Type': _contentType, ...headers } = answer.headers;
    const visibility = (name: string) => ({
      cloudWatchMetricsEnabled: true,
      metricName: `PlantStore-${props.stageName}-${name}`,
      sampledRequestsEnabled: true,
    });
    this.webAcl = new CfnWebACL(this, 'WebAcl', {
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
      webAclArn: this.webAcl.attrArn,
    });
  }
}
