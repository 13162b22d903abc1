/**
 * Construct options the two synthesized stages do not use: an external OIDC issuer and a WAF web
 * ACL. Built in bare stacks with inline functions, so nothing is bundled.
 */
import { describe, expect, it } from '@jest/globals';
import { Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { clientKeyValue, sharedClient } from '../../functions/authorizer/client-keys.ts';
import { routes, scopeDescriptions } from '../../functions/shared/http/routes.ts';
import { stages } from '../../infra/stages.ts';
import { clientThrottling, routeThrottling, tokenLimits } from '../../infra/throttling.ts';
import { TokenIssuer } from '../../infra/token-issuer.ts';
import { createPlantsApi } from './bare-plants-api.ts';

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

  it('rejects scopes that are not <resource server>/<scope>, and makes a resource server per prefix', () => {
    const issuerWith =
      (scopes: Record<string, string>, stack = new Stack()) =>
      () =>
        new TokenIssuer(stack, 'TokenIssuer', {
          config: { kind: 'cognito' },
          stageName: 'dev',
          scopes,
          productionLike: false,
        });
    expect(issuerWith({ write: 'Write' })).toThrow('must look like <resource server>/<scope>');
    const stack = new Stack();
    issuerWith({ 'plants/read': 'Read', 'trees/water': 'Water' }, stack)();
    const servers = Template.fromStack(stack).findResources('AWS::Cognito::UserPoolResourceServer');
    expect(
      Object.values(servers).map((server) => [
        server.Properties.Identifier,
        server.Properties.Scopes.map((scope: { ScopeName: string }) => scope.ScopeName),
      ]),
    ).toEqual([
      ['plants', ['read']],
      ['trees', ['water']],
    ]);
  });
});

describe('TokenIssuer with the UPDATED Cognito issuer format', () => {
  it('pins it on the pool and derives the issuer and JWKS URL from it', () => {
    const stack = new Stack();
    const issuer = new TokenIssuer(stack, 'TokenIssuer', {
      config: { kind: 'cognito', issuerFormat: 'UPDATED' },
      stageName: 'prod',
      scopes: scopeDescriptions,
      productionLike: true,
    });
    Template.fromStack(stack).hasResourceProperties('AWS::Cognito::UserPool', {
      IssuerConfiguration: { Type: 'UPDATED' },
    });
    const resolved = stack.resolve(issuer.authorizerEnvironment);
    expect(JSON.stringify(resolved.TOKEN_ISSUER)).toContain('https://issuer-cognito-idp.');
    expect(JSON.stringify(resolved.JWKS_URI)).toContain('https://issuer-cognito-idp.');
    expect(JSON.stringify(resolved.JWKS_URI)).toContain('/.well-known/jwks.json');
  });
});

describe('PlantsApi without the account-wide CloudWatch role', () => {
  it('creates no role and sets no account when the stage leaves them to a platform team', () => {
    const stack = new Stack();
    createPlantsApi(stack, { manageCloudWatchRole: false });
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::ApiGateway::Account', 0);
    expect(
      Object.keys(
        template.findResources('AWS::IAM::Role', {
          Properties: Match.objectLike({
            AssumeRolePolicyDocument: Match.objectLike({
              Statement: [Match.objectLike({ Principal: { Service: 'apigateway.amazonaws.com' } })],
            }),
          }),
        }),
      ),
    ).toEqual([]);
  });
});

describe('PlantsApi on a custom domain', () => {
  it('maps the stage under the base path, adds the alias record, and points ApiUrl there', () => {
    const stack = new Stack();
    const api = createPlantsApi(stack, {
      stageName: 'prod',
      customDomain: {
        domainName: 'plants.example.com',
        certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/abc',
        basePath: 'v1',
        hostedZone: { hostedZoneId: 'Z123EXAMPLE', zoneName: 'example.com' },
      },
    });
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::ApiGateway::DomainName', {
      DomainName: 'plants.example.com',
      RegionalCertificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/abc',
      EndpointConfiguration: { Types: ['REGIONAL'] },
      SecurityPolicy: 'TLS_1_2',
    });
    template.hasResourceProperties('AWS::ApiGateway::BasePathMapping', {
      BasePath: 'v1',
      Stage: { Ref: Match.stringLikeRegexp('^ApiRestApiDeploymentStageprod') },
    });
    template.hasResourceProperties('AWS::Route53::RecordSet', {
      Name: 'plants.example.com.',
      Type: 'A',
      HostedZoneId: 'Z123EXAMPLE',
    });
    expect(api.plantsUrl).toBe('https://plants.example.com/v1/plants');
  });
});

describe('PlantsApi’s usage plan', () => {
  it('limits each client on each method, before the method’s own limit, with the key the authorizer names', () => {
    const stack = new Stack();
    createPlantsApi(stack, { stageName: 'dev', throttling: stages.dev.throttling });
    const template = Template.fromStack(stack);
    const budgets = { plants: stages.dev.throttling };
    template.hasResourceProperties('AWS::ApiGateway::RestApi', { ApiKeySourceType: 'AUTHORIZER' });
    const methods = Object.values(template.findResources('AWS::ApiGateway::Method'));
    // Every route requires the key; the preflights, which have no authorizer, do not.
    expect(
      methods.map((method) => [method.Properties.HttpMethod, method.Properties.ApiKeyRequired]),
    ).toEqual(expect.arrayContaining(routes.map((route) => [route.method, true])));
    for (const method of methods) {
      expect(method.Properties.ApiKeyRequired === true).toBe(
        method.Properties.HttpMethod !== 'OPTIONS',
      );
    }
    template.hasResourceProperties('AWS::ApiGateway::UsagePlan', {
      UsagePlanName: 'plant-store-dev-clients',
      ApiStages: [
        {
          ApiId: Match.anyValue(),
          Stage: Match.anyValue(),
          Throttle: Object.fromEntries(
            routes.map((route) => {
              const limits = clientThrottling(route, budgets);
              return [
                `${route.path}/${route.method}`,
                { RateLimit: limits.rateLimit, BurstLimit: limits.burstLimit },
              ];
            }),
          ),
        },
      ],
    });
    // Half a method's share: one client never takes the whole bucket.
    for (const route of routes) {
      expect(clientThrottling(route, budgets).rateLimit).toBe(
        routeThrottling(route, budgets).rateLimit / 2,
      );
    }
    const shared = clientKeyValue('plant-store-dev-clients', sharedClient);
    template.hasResourceProperties('AWS::ApiGateway::ApiKey', { Value: shared, Enabled: true });
    template.resourceCountIs('AWS::ApiGateway::UsagePlanKey', 1);
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Action: ['apigateway:GET', 'apigateway:POST'] }),
        ]),
      },
    });
  });
});

describe('PlantsApi with a WAF web ACL', () => {
  it('puts its own web ACL in front of the stage when it names none: per-token limits keyed on the bearer token', () => {
    const stack = new Stack();
    createPlantsApi(stack, {
      stageName: 'dev',
      throttling: stages.dev.throttling,
      allowedOrigins: ['*'],
    });
    const template = Template.fromStack(stack);
    const limits = tokenLimits({ plants: stages.dev.throttling });
    template.hasResourceProperties('AWS::WAFv2::WebACL', {
      Scope: 'REGIONAL',
      DefaultAction: { Allow: {} },
      CustomResponseBodies: {
        'too-many-requests': {
          ContentType: 'APPLICATION_JSON',
          Content: JSON.stringify({
            error: 42900,
            message: 'Too many requests with this token in the last minute; retry later.',
          }),
        },
      },
      Rules: limits.map((limit, priority) => ({
        Name: `per-token-${limit.group}`,
        Priority: priority,
        Action: {
          Block: {
            CustomResponse: {
              ResponseCode: 429,
              CustomResponseBodyKey: 'too-many-requests',
              ResponseHeaders: [
                { Name: 'Retry-After', Value: '60' },
                { Name: 'Access-Control-Allow-Origin', Value: '*' },
              ],
            },
          },
        },
        Statement: {
          RateBasedStatement: {
            Limit: limit.requestsPerWindow,
            EvaluationWindowSec: 60,
            AggregateKeyType: 'CUSTOM_KEYS',
            CustomKeys: [
              {
                Header: {
                  Name: 'authorization',
                  TextTransformations: [{ Priority: 0, Type: 'NONE' }],
                },
              },
            ],
            ScopeDownStatement: {
              ByteMatchStatement: Match.objectLike({
                SearchString: limit.pathContains,
                FieldToMatch: { UriPath: {} },
                PositionalConstraint: 'CONTAINS',
              }),
            },
          },
        },
        VisibilityConfig: Match.anyValue(),
      })),
    });
    // Half an even share a minute: dev's plants budget 100/s over six routes, the endpoints' 2/s.
    expect(limits.map((limit) => limit.requestsPerWindow)).toEqual([500, 60]);
    template.hasResourceProperties('AWS::WAFv2::WebACLAssociation', {
      WebACLArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^ApiClientRateLimitsWebAcl'), 'Arn'] },
    });
  });

  it('associates the web ACL the stage names instead (its team adds the rules), and makes none', () => {
    const stack = new Stack();
    const webAclArn =
      'arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/plant-store/a1b2c3d4-5678-90ab-cdef-EXAMPLE11111';
    createPlantsApi(stack, {
      stageName: 'prod',
      webAclArn,
    });
    Template.fromStack(stack).resourceCountIs('AWS::WAFv2::WebACL', 0);
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

describe('PlantsApi for browsers (CORS)', () => {
  function synthesizeApi(allowedOrigins: readonly string[]) {
    const stack = new Stack();
    createPlantsApi(stack, {
      allowedOrigins,
    });
    return Template.fromStack(stack);
  }
  const preflights = (template: Template) =>
    Object.values(template.findResources('AWS::ApiGateway::Method')).filter(
      (method) => method.Properties.HttpMethod === 'OPTIONS',
    );

  it('answers a preflight on every resource of the route table in API Gateway, without a token', () => {
    const template = synthesizeApi(['https://app.example.com', 'https://admin.example.com']);
    const resources = new Set(routes.map((route) => route.path));
    const methods = preflights(template);
    expect(methods).toHaveLength(resources.size);
    const allowMethods = methods
      .map(
        (method) =>
          method.Properties.Integration.IntegrationResponses[0].ResponseParameters[
            'method.response.header.Access-Control-Allow-Methods'
          ],
      )
      .sort();
    expect(allowMethods).toEqual(
      [...resources]
        .map((path) => {
          const served = routes.filter((route) => route.path === path).map((route) => route.method);
          return `'${[...served, 'OPTIONS'].join(', ')}'`;
        })
        .sort(),
    );
    for (const method of methods) {
      expect(method.Properties).toMatchObject({
        AuthorizationType: 'NONE',
        // The API's binary media type `*/*` must not turn the preflight binary.
        Integration: { Type: 'MOCK', ContentHandling: 'CONVERT_TO_TEXT' },
      });
      const [response] = method.Properties.Integration.IntegrationResponses;
      expect(response.ContentHandling).toBe('CONVERT_TO_TEXT');
      expect(response.ResponseParameters).toMatchObject({
        'method.response.header.Access-Control-Allow-Headers':
          "'Authorization, Content-Type, Idempotency-Key, If-Match, If-None-Match, traceparent, tracestate'",
        'method.response.header.Access-Control-Max-Age': "'7200'",
        'method.response.header.Vary': "'Origin'",
        // As every answer of the API.
        'method.response.header.X-Content-Type-Options': "'nosniff'",
        'method.response.header.Cache-Control': "'no-store'",
      });
      // The origin only for an allowed one: set by the template, never a literal.
      expect(
        response.ResponseParameters['method.response.header.Access-Control-Allow-Origin'],
      ).toBeUndefined();
      expect(response.ResponseTemplates['application/json']).toBe(
        [
          '#set($origin = $input.params().header.get("Origin"))',
          '#if("$!origin" == "")#set($origin = $input.params().header.get("origin"))#end',
          '#if($origin == "https://app.example.com" || $origin == "https://admin.example.com")',
          '#set($context.responseOverride.header.Access-Control-Allow-Origin = $origin)',
          '#end',
        ].join('\n'),
      );
      expect(Object.keys(method.Properties.MethodResponses[0].ResponseParameters)).toContain(
        'method.response.header.Access-Control-Allow-Origin',
      );
    }
  });

  it('gives the gateway’s own answers the CORS headers: the request’s origin when several are allowed, the one otherwise', () => {
    const headersOf = (template: Template) =>
      Object.values(template.findResources('AWS::ApiGateway::GatewayResponse')).map(
        (response) => response.Properties.ResponseParameters,
      );
    for (const parameters of headersOf(
      synthesizeApi(['https://a.example.com', 'https://b.example.com']),
    )) {
      expect(parameters).toMatchObject({
        'gatewayresponse.header.Access-Control-Allow-Origin': 'method.request.header.Origin',
        'gatewayresponse.header.Access-Control-Expose-Headers':
          "'ETag, Idempotent-Replayed, Link, Retry-After, traceresponse, WWW-Authenticate, x-amzn-RequestId'",
        'gatewayresponse.header.Vary': "'Origin'",
      });
    }
    for (const parameters of headersOf(synthesizeApi(['https://a.example.com']))) {
      expect(parameters['gatewayresponse.header.Access-Control-Allow-Origin']).toBe(
        "'https://a.example.com'",
      );
    }
    const none = synthesizeApi([]);
    expect(preflights(none)).toEqual([]);
    for (const parameters of headersOf(none)) {
      expect(parameters['gatewayresponse.header.Access-Control-Allow-Origin']).toBeUndefined();
    }
  });
});
