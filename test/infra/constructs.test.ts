/**
 * Construct options the two synthesized stages do not use: an external OIDC issuer and a WAF web
 * ACL. Built in bare stacks with inline functions, so nothing is bundled.
 */
import { describe, expect, it } from '@jest/globals';
import { RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { scopeDescriptions } from '../../functions/shared/routes.ts';
import { PlantsApi } from '../../infra/plants-api.ts';
import { TokenIssuer } from '../../infra/token-issuer.ts';

function createInlineFunction(stack: Stack, id: string): LambdaFunction {
  return new LambdaFunction(stack, id, {
    runtime: Runtime.NODEJS_24_X,
    handler: 'index.handler',
    code: Code.fromInline('export const handler = async () => ({});'),
  });
}

describe('TokenIssuer with an external OIDC issuer', () => {
  it('creates no user pool and hands the issuer, audiences and JWKS URI to the authorizer', () => {
    const issuer = new TokenIssuer(new Stack(), 'TokenIssuer', {
      config: {
        kind: 'oidc',
        issuerUrl: 'https://example.eu.auth0.com/',
        audience: ['https://plants.example.com', 'plants-legacy'],
        tokenUrl: 'https://example.eu.auth0.com/oauth/token',
      },
      stageName: 'dev',
      scopes: scopeDescriptions,
      productionLike: false,
    });

    // Nothing to deploy: the issuer exists already.
    expect(issuer.node.children).toHaveLength(0);
    expect(issuer.authorizerEnvironment).toEqual({
      TOKEN_ISSUER: 'https://example.eu.auth0.com/',
      TOKEN_AUDIENCE: 'https://plants.example.com,plants-legacy',
      TOKEN_AUDIENCE_CLAIM: 'aud',
      JWKS_URI: 'https://example.eu.auth0.com/.well-known/jwks.json',
    });
    expect(issuer.tokenUrl).toBe('https://example.eu.auth0.com/oauth/token');
    expect(issuer.clientId).toBeUndefined();
  });

  it('uses the configured JWKS URI when the issuer publishes its keys elsewhere', () => {
    const issuer = new TokenIssuer(new Stack(), 'TokenIssuer', {
      config: {
        kind: 'oidc',
        issuerUrl: 'https://example.okta.com/oauth2/default',
        audience: 'api://plants',
        jwksUri: 'https://example.okta.com/oauth2/default/v1/keys',
      },
      stageName: 'prod',
      scopes: scopeDescriptions,
      productionLike: true,
    });
    expect(issuer.authorizerEnvironment.JWKS_URI).toBe(
      'https://example.okta.com/oauth2/default/v1/keys',
    );
    expect(issuer.authorizerEnvironment.TOKEN_AUDIENCE).toBe('api://plants');
    expect(issuer.tokenUrl).toBeUndefined();
  });

  it('rejects scopes that are not <resource server>/<scope> on one resource server', () => {
    const issuerWith = (scopes: Record<string, string>) => () =>
      new TokenIssuer(new Stack(), 'TokenIssuer', {
        config: { kind: 'cognito' },
        stageName: 'dev',
        scopes,
        productionLike: false,
      });
    expect(issuerWith({ write: 'Write' })).toThrow('must look like <resource server>/<scope>');
    expect(issuerWith({ 'plants/read': 'Read', 'trees/write': 'Write' })).toThrow(
      'must share one resource server',
    );
  });
});

describe('PlantsApi with a WAF web ACL', () => {
  it('associates the web ACL with the API stage', () => {
    const stack = new Stack();
    const webAclArn =
      'arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/plant-store/a1b2c3d4-5678-90ab-cdef-EXAMPLE11111';
    new PlantsApi(stack, 'Api', {
      stageName: 'prod',
      throttling: { rateLimit: 10, burstLimit: 20 },
      routeFunctions: {
        createPlant: createInlineFunction(stack, 'CreatePlant'),
        listPlants: createInlineFunction(stack, 'ListPlants'),
        getPlant: createInlineFunction(stack, 'GetPlant'),
        deletePlant: createInlineFunction(stack, 'DeletePlant'),
      },
      authorizerFunction: createInlineFunction(stack, 'Authorizer'),
      logRetention: RetentionDays.ONE_WEEK,
      logRemovalPolicy: RemovalPolicy.DESTROY,
      webAclArn,
    });
    Template.fromStack(stack).hasResourceProperties('AWS::WAFv2::WebACLAssociation', {
      WebACLArn: webAclArn,
      ResourceArn: {
        'Fn::Join': [
          '',
          [
            'arn:',
            { Ref: 'AWS::Partition' },
            ':apigateway:',
            { Ref: 'AWS::Region' },
            '::/restapis/',
            { Ref: Match.stringLikeRegexp('^ApiRestApi') },
            '/stages/',
            { Ref: Match.stringLikeRegexp('^ApiRestApiDeploymentStageprod') },
          ],
        ],
      },
    });
  });
});
