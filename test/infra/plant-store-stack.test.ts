/**
 * The synthesized `PlantStore-dev` and `PlantStore-prod` stacks: the REST API, its gateway
 * responses and the stack's outputs, asserted property by property.
 */
import { describe, expect, it } from '@jest/globals';
import { Match } from 'aws-cdk-lib/assertions';
import { routes } from '../../functions/shared/http/routes.ts';
import { functionSettings } from '../../infra/function-settings.ts';
import { gatewayResponses } from '../../infra/gateway-responses.ts';
import { accessLogFields, authorizerCacheSeconds } from '../../infra/plants-api.ts';
import { stages } from '../../infra/stages.ts';
import {
  defaultEndpointThrottling,
  isEndpointRoute,
  plantsRouteShares,
} from '../../infra/throttling.ts';
import { pascalCase, synthesizedStages } from './synthesized-stages.ts';

const synthesizedStage = synthesizedStages();

describe.each([stages.dev, stages.prod])('the PlantStore-$name stack', (stage) => {
  const template = () => synthesizedStage(stage.name).template;

  describe('REST API', () => {
    it('serves exactly the routes of the route table, each through its function behind the TOKEN authorizer', () => {
      template().resourceCountIs('AWS::ApiGateway::RestApi', 1);
      const resources = template().findResources('AWS::ApiGateway::Resource');
      const pathOf = (resourceId: unknown): string => {
        const logicalId = (resourceId as { Ref?: string }).Ref;
        const resource = logicalId === undefined ? undefined : resources[logicalId];
        if (resource === undefined) return ''; // the root resource
        return `${pathOf(resource.Properties.ParentId)}/${resource.Properties.PathPart}`;
      };
      const methods = Object.values(template().findResources('AWS::ApiGateway::Method'));
      // A stage that allows browsers answers their preflights itself (test/infra/constructs).
      const preflights = methods.filter(
        ({ Properties: method }) => method.HttpMethod === 'OPTIONS',
      );
      expect(preflights).toHaveLength(
        stage.cors === undefined ? 0 : new Set(routes.map((route) => route.path)).size,
      );
      const served = methods
        .filter(({ Properties: method }) => method.HttpMethod !== 'OPTIONS')
        .map(({ Properties: method }) => {
          expect(method).toMatchObject({
            AuthorizationType: 'CUSTOM',
            AuthorizerId: { Ref: expect.stringMatching(/^ApiTokenAuthorizer/) },
            Integration: { Type: 'AWS_PROXY', IntegrationHttpMethod: 'POST' },
          });
          // The function itself, or in production-like stages its `live` alias.
          const functionArn = JSON.stringify(method.Integration.Uri).match(
            stage.productionLike
              ? /"Ref":"([A-Za-z]+?)GradualDeploymentLive[0-9A-F]{8}"/
              : /"Fn::GetAtt":\["([A-Za-z]+?)[0-9A-F]{8}","Arn"\]/,
          )?.[1];
          return `${method.HttpMethod} ${pathOf(method.ResourceId)} ${functionArn}`;
        });
      const expected = routes.map(
        (route) => `${route.method} ${route.path} ${pascalCase(route.function)}`,
      );
      expect(served.sort()).toEqual(expected.sort());
    });

    it(`caches the authorizer's answer for at least ${authorizerCacheSeconds} s, keyed by the Authorization header`, () => {
      template().hasResourceProperties('AWS::ApiGateway::Authorizer', {
        Type: 'TOKEN',
        IdentitySource: 'method.request.header.Authorization',
        AuthorizerResultTtlInSeconds: authorizerCacheSeconds,
        AuthorizerUri: Match.objectLike({
          'Fn::Join': Match.arrayWith([
            Match.arrayWith([
              // Production-like stages call the function's `live` alias (gradual deploys).
              stage.productionLike
                ? { Ref: Match.stringLikeRegexp('^AuthorizerGradualDeploymentLive') }
                : { 'Fn::GetAtt': [Match.stringLikeRegexp('^Authorizer'), 'Arn'] },
            ]),
          ]),
        }),
      });
      expect(authorizerCacheSeconds).toBeGreaterThanOrEqual(300);
    });

    it(`throttles the ${stage.name} stage within ${stage.throttling.rateLimit}/s and bursts of ${stage.throttling.burstLimit} in all, each method its share, with tracing and error logs`, () => {
      const [stageResource] = Object.values(template().findResources('AWS::ApiGateway::Stage'));
      expect(stageResource?.Properties.TracingEnabled).toBe(true);
      const [everyMethod, ...routeMethods] = stageResource?.Properties.MethodSettings ?? [];
      const plants = routes.filter((route) => !isEndpointRoute(route));
      const endpoints = routes.filter(isEndpointRoute);
      const endpointBudget = stage.webhookEndpointThrottling ?? defaultEndpointThrottling;
      // API Gateway applies these to each method: what no route names (the preflights) gets an
      // even share of the plants budget.
      expect(everyMethod).toEqual({
        HttpMethod: '*',
        ResourcePath: '/*',
        ThrottlingRateLimit: stage.throttling.rateLimit / plants.length,
        ThrottlingBurstLimit: Math.floor(stage.throttling.burstLimit / plants.length),
        LoggingLevel: 'ERROR',
        DataTraceEnabled: false,
        MetricsEnabled: true,
      });
      // Each plants route its declared share, each endpoint route an even share of theirs, set
      // on the method itself (CloudFormation spells the path `/~1webhook-endpoints~1{endpointId}`:
      // "/" is "~1" after the first).
      const settings = routeMethods.map((setting: Record<string, unknown>) => ({
        route: `${setting.HttpMethod} ${String(setting.ResourcePath).slice(1).replaceAll('~1', '/')}`,
        rate: setting.ThrottlingRateLimit,
        burst: setting.ThrottlingBurstLimit,
      }));
      expect(settings).toEqual(
        routes.map((route) => {
          const share = isEndpointRoute(route)
            ? undefined
            : plantsRouteShares[`${route.method} ${route.path}`];
          return {
            route: `${route.method} ${route.path}`,
            rate:
              share === undefined
                ? endpointBudget.rateLimit / endpoints.length
                : stage.throttling.rateLimit * share,
            burst:
              share === undefined
                ? Math.floor(endpointBudget.burstLimit / endpoints.length)
                : Math.max(1, Math.floor(stage.throttling.burstLimit * share)),
          };
        }),
      );
      // Together the plants routes never pass the stage's budget.
      const plantsRates = settings
        .filter((setting: { route: string }) => !setting.route.includes('/webhook-endpoints'))
        .reduce((sum: number, setting: { rate: number }) => sum + setting.rate, 0);
      expect(plantsRates).toBeCloseTo(stage.throttling.rateLimit, 6);
    });

    it('writes JSON access logs with the request, outcome and errors, never the token, body or path as sent', () => {
      const stageResource = Object.values(template().findResources('AWS::ApiGateway::Stage'))[0];
      const format = stageResource?.Properties.AccessLogSetting.Format as string;
      const fields = JSON.parse(format) as Record<string, string>;
      expect(fields).toMatchObject({
        requestId: '$context.requestId',
        ip: '$context.identity.sourceIp',
        method: '$context.httpMethod',
        resourcePath: '$context.resourcePath',
        status: '$context.status',
        latencyMs: '$context.responseLatency',
        errorMessage: '$context.error.message',
        authorizerError: '$context.authorizer.error',
      });
      expect(fields).toEqual(accessLogFields);
      expect(format).not.toMatch(/authorization|header|body|requestOverride/i);
      // The path as sent may hold a token (`/plants/<jwt>`); the route may not.
      expect(format).not.toContain('$context.path');
      // The log group's ARN without the `:*` suffix GetAtt adds (feature flag
      // @aws-cdk/aws-apigateway:logGroupDestinationArnWithoutWildcard).
      expect(stageResource?.Properties.AccessLogSetting.DestinationArn).toEqual({
        'Fn::Join': [
          '',
          [
            'arn:',
            { Ref: 'AWS::Partition' },
            ':logs:',
            { Ref: 'AWS::Region' },
            ':',
            { Ref: 'AWS::AccountId' },
            ':log-group:',
            { Ref: expect.stringMatching(/^ApiAccessLogs/) },
          ],
        ],
      });
    });

    it(`keeps access logs ${stage.logRetentionDays} days`, () => {
      template().hasResource('AWS::Logs::LogGroup', {
        Properties: { RetentionInDays: stage.logRetentionDays },
        DeletionPolicy: stage.productionLike ? 'Retain' : 'Delete',
      });
      const logGroups = template().findResources('AWS::Logs::LogGroup');
      // The access logs and one group per function.
      expect(
        Object.keys(logGroups)
          .map((id) => id.replace(/[0-9A-F]{8}$/, ''))
          .sort(),
      ).toEqual(
        [
          'ApiAccessLogs',
          ...Object.keys(functionSettings).map((name) => `${pascalCase(name)}LogGroup`),
        ].sort(),
      );
      for (const logGroup of Object.values(logGroups)) {
        expect(logGroup.Properties.RetentionInDays).toBe(stage.logRetentionDays);
      }
    });

    it('is regional and keeps the account-wide logging role when the stack is deleted', () => {
      template().hasResourceProperties('AWS::ApiGateway::RestApi', {
        EndpointConfiguration: { Types: ['REGIONAL'] },
      });
      template().hasResource('AWS::IAM::Role', {
        Properties: {
          AssumeRolePolicyDocument: Match.objectLike({
            Statement: [Match.objectLike({ Principal: { Service: 'apigateway.amazonaws.com' } })],
          }),
        },
        DeletionPolicy: 'Retain',
      });
    });
  });

  describe('gateway responses', () => {
    const responses = Object.values(gatewayResponses);

    it('defines one gateway response for every entry of infra/gateway-responses.ts', () => {
      template().resourceCountIs('AWS::ApiGateway::GatewayResponse', responses.length);
    });

    it.each(responses)('answers $type with $statusCode and the Error body', (response) => {
      const headers = Object.fromEntries(
        Object.entries(response.headers).map(([name, value]) => [
          `gatewayresponse.header.${name}`,
          `'${value}'`,
        ]),
      );
      template().hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
        ResponseType: response.type,
        StatusCode: String(response.statusCode),
        ResponseParameters: headers,
        ResponseTemplates: { 'application/json': JSON.stringify(response.body) },
      });
    });

    it('challenges with WWW-Authenticate: Bearer and answers unknown routes 404/40400', () => {
      template().hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
        ResponseType: 'UNAUTHORIZED',
        StatusCode: '401',
        ResponseParameters: Match.objectLike({
          'gatewayresponse.header.WWW-Authenticate': Match.stringLikeRegexp("^'Bearer "),
        }),
      });
      template().hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
        ResponseType: 'MISSING_AUTHENTICATION_TOKEN',
        StatusCode: '404',
        ResponseTemplates: { 'application/json': Match.stringLikeRegexp('"error":40400') },
      });
      for (const type of ['ACCESS_DENIED', 'THROTTLED', 'DEFAULT_4XX', 'DEFAULT_5XX']) {
        template().hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
          ResponseType: type,
        });
      }
    });
  });

  it('describes the API and its URL with every method of the route table', () => {
    const [api] = Object.values(template().findResources('AWS::ApiGateway::RestApi'));
    expect(api?.Properties.Description).toBe(
      'Plant Store: add, list, read, change and delete plants with a bearer token, and manage webhook endpoints.',
    );
    const description = String(template().findOutputs('ApiUrl').ApiUrl?.Description);
    for (const method of new Set(routes.map((route) => route.method))) {
      expect(description).toContain(method);
    }
  });

  it('outputs the API URL, the token URL, the client id and the issuer', () => {
    template().hasOutput('ApiUrl', {
      Value: { 'Fn::Join': ['', Match.arrayWith(['/plants'])] },
    });
    template().hasOutput('TokenUrl', {
      Value: {
        'Fn::Join': [
          '',
          [
            'https://',
            { Ref: Match.stringLikeRegexp('^TokenIssuerUserPoolDomain') },
            '.auth.',
            { Ref: 'AWS::Region' },
            '.amazoncognito.com/oauth2/token',
          ],
        ],
      },
    });
    template().hasOutput('IssuerUrl', {
      Value: {
        'Fn::Join': [
          '',
          Match.arrayWith([
            'https://cognito-idp.',
            { Ref: Match.stringLikeRegexp('^TokenIssuerUserPool') },
          ]),
        ],
      },
    });
    template().hasOutput('ClientId', {
      Value: { Ref: Match.stringLikeRegexp('^TokenIssuerUserPoolClientCredentialsClient') },
    });
  });
});
