/**
 * The synthesized `PlantStore-dev` and `PlantStore-prod` stacks, asserted property by property.
 * Each stage is synthesized once (esbuild bundles both functions, cdk-nag checks the app) into a
 * temporary cloud assembly that is removed afterwards.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { build } from 'esbuild';
import { routeFunctionNames, routes } from '../../functions/shared/routes.ts';
import { readFanoutConfig } from '../../functions/webhook-fanout/config.ts';
import { createBuildOptions, createRequireBanner } from '../../infra/bundling.ts';
import { cfnLintExceptions } from '../../infra/cfn-lint-exceptions.ts';
import { type FunctionSettings, functionSettings } from '../../infra/function-settings.ts';
import { gatewayResponses } from '../../infra/gateway-responses.ts';
import { createPlantStoreApp } from '../../infra/plant-store-app.ts';
import { repositoryRoot } from '../../infra/plant-store-function.ts';
import { accessLogFields, authorizerCacheSeconds } from '../../infra/plants-api.ts';
import { type StageConfig, stages } from '../../infra/stages.ts';
import { findPythonTool } from '../../local/aws-emulation/python-tools.ts';

/** `createPlant` → `CreatePlant`: a function's construct id, the start of its logical id. */
function pascalCase(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}

interface SynthesizedStage {
  readonly outdir: string;
  readonly template: Template;
  readonly validationReport: ValidationReport;
  /** Every `Validations.acknowledge` in the app: id → reason. */
  readonly acknowledgments: ReadonlyMap<string, string>;
}

interface ValidationReport {
  readonly pluginReports: readonly {
    readonly pluginName: string;
    readonly conclusion: string;
    readonly violations?: readonly { readonly ruleName: string }[];
    readonly suppressedViolations?: readonly {
      readonly ruleName: string;
      readonly acknowledgedId: string;
      readonly reason: string;
      readonly violatingConstructs: readonly { readonly constructPath: string }[];
    }[];
  }[];
}

/** The findings each stage acknowledges: a new finding, or one that goes away, fails a test. */
const acknowledgedFindings = [
  'AwsSolutions-APIG2',
  'AwsSolutions-APIG3',
  'AwsSolutions-COG4',
  'AwsSolutions-COG8',
  'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
  'AwsSolutions-IAM5[Resource::*]',
  'AwsSolutions-IAM5[Resource::<WebhooksStreamFailures483EBBE6.Arn>/*]',
  'AwsSolutions-S1',
  'Serverless-LambdaDLQ',
  'Serverless-LambdaEventSourceMappingDestination',
  'Serverless-SQSRedrivePolicy',
];

/** The Control Tower rules (cfn-guard) each stage acknowledges, reasons in the stack. */
const acknowledgedControlTowerFindings = [
  'cloudwatch_log_group_encrypted_check', // CT.CLOUDWATCH.PR.3
  'lambda_function_public_access_prohibited_check', // CT.LAMBDA.PR.2: Fn::Join SourceArn
  'lambda_inside_vpc_check', // CT.LAMBDA.PR.3
  'sqs_dlq_check', // CT.SQS.PR.1: the dead-letter queues themselves
  // The kept stream failures' bucket: CT.S3.PR.2, .4, .9 and .10.
  's3_bucket_logging_enabled_check',
  's3_event_notifications_enabled_check',
  's3_bucket_object_lock_enabled_check',
  's3_bucket_default_encryption_kms_check',
];

/** The CDK CLI's settings, feature flags included, so the tests synthesize what deploys. */
const cdkJson = JSON.parse(readFileSync(path.join(repositoryRoot, 'cdk.json'), 'utf8')) as {
  context: Record<string, unknown>;
};

const synthesized = new Map<string, SynthesizedStage>();

function synthesizeStage(stage: StageConfig): SynthesizedStage {
  const outdir = mkdtempSync(path.join(tmpdir(), `plant-store-${stage.name}-`));
  const { app, stack } = createPlantStoreApp({
    outdir,
    // As the CDK CLI does: cdk.json's feature flags, and construct paths and asset folders
    // recorded for `sam local`.
    context: {
      ...cdkJson.context,
      stage: stage.name,
      'aws:cdk:enable-path-metadata': true,
      'aws:cdk:enable-asset-metadata': true,
    },
  });
  // Throws when a cdk-nag finding is not acknowledged (the validation plugins run here).
  app.synth();
  const acknowledgments = new Map<string, string>();
  for (const construct of app.node.findAll()) {
    for (const entry of construct.node.metadata) {
      if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
      for (const [id, reason] of Object.entries(entry.data as Record<string, string>)) {
        acknowledgments.set(id, reason);
      }
    }
  }
  return {
    outdir,
    template: Template.fromStack(stack),
    validationReport: JSON.parse(
      readFileSync(path.join(outdir, 'validation-report.json'), 'utf8'),
    ) as ValidationReport,
    acknowledgments,
  };
}

function synthesizedStage(name: string): SynthesizedStage {
  const result = synthesized.get(name);
  if (result === undefined) throw new Error(`stage ${name} was not synthesized`);
  return result;
}

/** The bundled code of a function, read from the cloud assembly the way SAM finds it. */
function readBundle(result: SynthesizedStage, logicalIdPrefix: string): string {
  const functions = result.template.findResources('AWS::Lambda::Function');
  const entry = Object.entries(functions).find(([id]) => id.startsWith(logicalIdPrefix));
  const assetPath = entry?.[1].Metadata?.['aws:asset:path'] as string | undefined;
  if (assetPath === undefined) throw new Error(`no bundled asset for ${logicalIdPrefix}`);
  return readFileSync(path.join(result.outdir, assetPath, 'index.mjs'), 'utf8');
}

beforeAll(() => {
  for (const stage of [stages.dev, stages.prod])
    synthesized.set(stage.name, synthesizeStage(stage));
}, 120_000);

afterAll(() => {
  for (const { outdir } of synthesized.values()) rmSync(outdir, { recursive: true, force: true });
});

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

    it(`throttles the ${stage.name} stage at ${stage.throttling.rateLimit}/s, bursts of ${stage.throttling.burstLimit}, with tracing and error logs`, () => {
      template().hasResourceProperties('AWS::ApiGateway::Stage', {
        StageName: stage.name,
        TracingEnabled: true,
        MethodSettings: [
          {
            HttpMethod: '*',
            ResourcePath: '/*',
            ThrottlingRateLimit: stage.throttling.rateLimit,
            ThrottlingBurstLimit: stage.throttling.burstLimit,
            LoggingLevel: 'ERROR',
            DataTraceEnabled: false,
            MetricsEnabled: true,
          },
        ],
      });
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
      expect(Object.keys(logGroups).sort()).toEqual([
        expect.stringMatching(/^ApiAccessLogs/),
        expect.stringMatching(/^AuthorizerLogGroup/),
        expect.stringMatching(/^CreatePlantLogGroup/),
        expect.stringMatching(/^DeletePlantLogGroup/),
        expect.stringMatching(/^DeliverWebhookLogGroup/),
        expect.stringMatching(/^GetPlantLogGroup/),
        expect.stringMatching(/^ListPlantsLogGroup/),
        expect.stringMatching(/^ReplayStreamFailuresLogGroup/),
        expect.stringMatching(/^UpdatePlantLogGroup/),
        expect.stringMatching(/^WebhookFanoutLogGroup/),
      ]);
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

  describe('functions', () => {
    it.each(
      Object.entries(functionSettings).map(([name, settings]): [string, FunctionSettings] => [
        pascalCase(name),
        settings,
      ]),
    )(
      '%s runs on nodejs24.x, arm64, traced, with its measured memory and timeout',
      (prefix, settings) => {
        template().hasResourceProperties('AWS::Lambda::Function', {
          Runtime: 'nodejs24.x',
          Architectures: ['arm64'],
          Handler: 'index.handler',
          MemorySize: settings.memorySizeMb,
          Timeout: settings.timeoutSeconds,
          TracingConfig: { Mode: 'Active' },
          // JSON, so the runtime's own lines (crashes, timeouts) are JSON metric filters can read.
          LoggingConfig: {
            LogFormat: 'JSON',
            LogGroup: { Ref: Match.stringLikeRegexp(`^${prefix}LogGroup`) },
          },
          Role: { 'Fn::GetAtt': [Match.stringLikeRegexp(`^${prefix}Role`), 'Arn'] },
        });
        expect(settings.memorySizeMb).toBeGreaterThan(128);
        // Behind API Gateway, a function must answer within its 29 s integration timeout.
        const behindApi = !/Webhook|StreamFailures/.test(prefix);
        if (behindApi) expect(settings.timeoutSeconds).toBeLessThan(29);
      },
    );

    it('never enables source maps through NODE_OPTIONS', () => {
      for (const fn of Object.values(template().findResources('AWS::Lambda::Function'))) {
        expect(fn.Properties.Environment?.Variables?.NODE_OPTIONS).toBeUndefined();
      }
    });

    it('keeps the bundles where SAM finds them (aws:cdk:path and aws:asset:path metadata)', () => {
      template().hasResource('AWS::Lambda::Function', {
        Metadata: {
          'aws:cdk:path': `PlantStore-${stage.name}/CreatePlant/Resource`,
          'aws:asset:path': Match.stringLikeRegexp('^asset\\.'),
          'aws:asset:property': 'Code',
        },
      });
      template().hasResource('AWS::Lambda::Function', {
        Metadata: Match.objectLike({
          'aws:cdk:path': `PlantStore-${stage.name}/Authorizer/Resource`,
        }),
      });
    });

    it('has its functions named in events/sam-env-vars.json, exactly their variables overridden', () => {
      const samEnvironment = JSON.parse(
        readFileSync(path.join(repositoryRoot, 'events', 'sam-env-vars.json'), 'utf8'),
      ) as Record<string, Record<string, string>>;
      const functions = template().findResources('AWS::Lambda::Function');
      expect(Object.keys(samEnvironment).sort()).toEqual(Object.keys(functions).sort());
      // SAM overrides only the variables a function declares, and ignores any other silently:
      // the file must name exactly the declared ones.
      for (const [logicalId, fn] of Object.entries(functions)) {
        const variables = Object.keys(fn.Properties.Environment.Variables);
        expect(Object.keys(samEnvironment[logicalId] ?? {}).sort()).toEqual(variables.sort());
      }
      // And the values are ones the functions start with.
      const fanoutVariables = Object.entries(samEnvironment).filter(([logicalId]) =>
        /^(WebhookFanout|ReplayStreamFailures)/.test(logicalId),
      );
      expect(fanoutVariables).toHaveLength(2);
      for (const [, variables] of fanoutVariables) {
        expect(() => readFanoutConfig(variables)).not.toThrow();
      }
    });

    it('gives each route function its table, and the authorizer its Cognito issuer settings', () => {
      for (const route of routes) {
        template().hasResource('AWS::Lambda::Function', {
          Metadata: Match.objectLike({
            'aws:cdk:path': `PlantStore-${stage.name}/${pascalCase(route.function)}/Resource`,
          }),
          Properties: Match.objectLike({
            Environment: {
              // Declared empty (AWS's endpoint) so that `sam local invoke --env-vars` can set it.
              Variables: {
                TABLE_NAME: { Ref: Match.stringLikeRegexp('^PlantsTable') },
                DYNAMODB_ENDPOINT: '',
              },
            },
          }),
        });
      }
      // The pool's pinned ORIGINAL issuer format: https://cognito-idp.<region>.<suffix>/<pool id>.
      const issuerParts = [
        'https://cognito-idp.',
        { Ref: 'AWS::Region' },
        '.',
        { Ref: 'AWS::URLSuffix' },
        '/',
        { Ref: Match.stringLikeRegexp('^TokenIssuerUserPool') },
      ];
      const issuerUrl = { 'Fn::Join': ['', issuerParts] };
      template().hasResourceProperties('AWS::Lambda::Function', {
        Environment: {
          Variables: {
            TOKEN_ISSUER: issuerUrl,
            TOKEN_AUDIENCE: {
              Ref: Match.stringLikeRegexp('^TokenIssuerUserPoolClientCredentialsClient'),
            },
            TOKEN_AUDIENCE_CLAIM: 'client_id',
            JWKS_URI: {
              'Fn::Join': ['', [...issuerParts, '/.well-known/jwks.json']],
            },
          },
        },
      });
    });

    it.each(routes.map((route) => [route.function]))(
      'lets %s call exactly its DynamoDB actions on its one table and nothing else',
      (name) => {
        const prefix = pascalCase(name);
        const policies = template().findResources('AWS::IAM::Policy', {
          Properties: { Roles: [{ Ref: Match.stringLikeRegexp(`^${prefix}Role`) }] },
        });
        const statements = Object.values(policies).flatMap(
          (policy) => policy.Properties.PolicyDocument.Statement,
        );
        const { tableActions } = functionSettings[name];
        const reads = tableActions.some((action) => /GetItem|Scan|Query/.test(action));
        expect(statements).toEqual([
          {
            Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
            Effect: 'Allow',
            Resource: {
              'Fn::GetAtt': [expect.stringMatching(new RegExp(`^${prefix}LogGroup`)), 'Arn'],
            },
          },
          {
            // X-Ray's write actions support no resource-level permissions.
            Action: ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'],
            Effect: 'Allow',
            Resource: '*',
          },
          {
            Action: tableActions.length === 1 ? tableActions[0] : [...tableActions].sort(),
            Effect: 'Allow',
            Resource: { 'Fn::GetAtt': [expect.stringMatching(/^PlantsTable/), 'Arn'] },
            // A function that may not read may not have a write return the old item either.
            ...(reads
              ? {}
              : { Condition: { StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' } } }),
          },
        ]);
      },
    );

    it('gives the function roles no managed policy and no wildcard action', () => {
      const roles = template().findResources('AWS::IAM::Role', {
        Properties: {
          AssumeRolePolicyDocument: Match.objectLike({
            Statement: [Match.objectLike({ Principal: { Service: 'lambda.amazonaws.com' } })],
          }),
        },
      });
      expect(Object.keys(roles)).toHaveLength(Object.keys(functionSettings).length);
      for (const role of Object.values(roles)) {
        expect(role.Properties.ManagedPolicyArns).toBeUndefined();
      }
      for (const policy of Object.values(template().findResources('AWS::IAM::Policy'))) {
        for (const statement of policy.Properties.PolicyDocument.Statement) {
          expect(
            [statement.Action].flat().filter((action: string) => action.includes('*')),
          ).toEqual([]);
        }
      }
    });

    it('bundles ESM with the createRequire banner, the AWS SDK inside and no source map', () => {
      const bundle = readBundle(synthesizedStage(stage.name), 'CreatePlant');
      // Matches are compared, not the bundle itself: a failure must not print 350 kB.
      expect(bundle.slice(0, createRequireBanner.length)).toBe(createRequireBanner);
      expect(bundle.match(/sourceMappingURL/g)).toBeNull();
      // Bundled, not imported from the runtime: the DynamoDB client's wire protocol is inside.
      expect(bundle.match(/from\s*["']@aws-sdk\//g)).toBeNull();
      expect(bundle.includes('DynamoDB_20120810')).toBe(true);
    });
  });

  describe('plants table', () => {
    it('is keyed by the Number id, on demand, encrypted, with point-in-time recovery', () => {
      template().resourceCountIs('AWS::DynamoDB::Table', 1);
      template().hasResourceProperties('AWS::DynamoDB::Table', {
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'N' }],
        BillingMode: 'PAY_PER_REQUEST',
        SSESpecification: { SSEEnabled: true },
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      });
    });

    it(
      stage.productionLike
        ? 'is retained and deletion-protected'
        : 'is deleted with the stack and not deletion-protected',
      () => {
        template().hasResource('AWS::DynamoDB::Table', {
          Properties: Match.objectLike({ DeletionProtectionEnabled: stage.productionLike }),
          DeletionPolicy: stage.productionLike ? 'Retain' : 'Delete',
          UpdateReplacePolicy: stage.productionLike ? 'Retain' : 'Delete',
        });
      },
    );
  });

  describe('token issuer', () => {
    it('is a Cognito user pool with the read and write scopes and a client-credentials client for both', () => {
      template().hasResource('AWS::Cognito::UserPool', {
        Properties: Match.objectLike({
          AdminCreateUserConfig: { AllowAdminCreateUserOnly: true },
          DeletionProtection: stage.productionLike ? 'ACTIVE' : 'INACTIVE',
        }),
        DeletionPolicy: stage.productionLike ? 'Retain' : 'Delete',
      });
      template().hasResourceProperties('AWS::Cognito::UserPoolResourceServer', {
        Identifier: 'plants',
        Scopes: [
          { ScopeName: 'read', ScopeDescription: Match.anyValue() },
          { ScopeName: 'write', ScopeDescription: Match.anyValue() },
        ],
      });
      template().resourceCountIs('AWS::Cognito::UserPoolClient', 1);
      template().hasResourceProperties('AWS::Cognito::UserPoolClient', {
        AllowedOAuthFlows: ['client_credentials'],
        AllowedOAuthFlowsUserPoolClient: true,
        AllowedOAuthScopes: ['/read', '/write'].map((scope) => ({
          'Fn::Join': [
            '',
            [{ Ref: Match.stringLikeRegexp('^TokenIssuerUserPoolResourceServer') }, scope],
          ],
        })),
        GenerateSecret: true,
      });
    });

    it('pins the ORIGINAL issuer format the authorizer expects', () => {
      template().hasResourceProperties('AWS::Cognito::UserPool', {
        IssuerConfiguration: { Type: 'ORIGINAL' },
      });
    });

    it(
      stage.productionLike
        ? 'retains the app client, resource server and domain with the pool'
        : 'deletes the app client, resource server and domain with the stack',
      () => {
        for (const type of [
          'AWS::Cognito::UserPoolClient',
          'AWS::Cognito::UserPoolResourceServer',
          'AWS::Cognito::UserPoolDomain',
        ]) {
          const resources = Object.values(template().findResources(type));
          expect(resources).toHaveLength(1);
          expect(resources[0]?.DeletionPolicy ?? 'Delete').toBe(
            stage.productionLike ? 'Retain' : 'Delete',
          );
        }
      },
    );

    it('has a hosted domain unique to the stage and account', () => {
      template().hasResourceProperties('AWS::Cognito::UserPoolDomain', {
        Domain: { 'Fn::Join': ['', [`plant-store-${stage.name}-`, { Ref: 'AWS::AccountId' }]] },
      });
    });
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

  describe('operations', () => {
    /** Every alarm a stage has, by name without the `PlantStore-<stage>-` prefix. */
    const expectedAlarms = [
      'Api-Fault-Rate-Warning',
      'Api-Latency-P99-Warning',
      ...[
        'create-plant',
        'list-plants',
        'get-plant',
        'update-plant',
        'delete-plant',
        'webhook-fanout',
        'deliver-webhook',
      ].flatMap((name) => [
        `${name}-Fault-Count-Warning`,
        `${name}-Throttled-Count-Warning`,
        `${name}-Latency-P99-Warning`,
      ]),
      // The authorizer's errors count invalid tokens: its own failures come from its log.
      'authorizer-Throttled-Count-Warning',
      'authorizer-Latency-P99-Warning',
      'Authorizer-Failures',
      'webhook-fanout-Iterator-Age-Max-Warning',
      'PlantsTable-Read-Throttled-Events-Warning',
      'PlantsTable-Write-Throttled-Events-Warning',
      'PlantsTable-SystemError-Count-Warning',
      'WebhookDeliveries-DLQ-Queue-Message-Count-Max-Warning',
      'WebhookRetries-Queue-Message-Age-Max-Warning',
      'Webhooks-Late',
      'Webhooks-Stream-Batch-Kept',
    ];

    it('has the alarms worth waking for, each notifying the stage\u2019s one topic', () => {
      template().resourceCountIs('AWS::SNS::Topic', 1);
      const alarms = Object.values(template().findResources('AWS::CloudWatch::Alarm'));
      const named = alarms
        .map((alarm) => alarm.Properties.AlarmName as string | undefined)
        .filter((name): name is string => name !== undefined)
        .map((name) => name.replace(`PlantStore-${stage.name}-`, ''));
      expect(named.sort()).toEqual([...expectedAlarms].sort());
      for (const alarm of alarms) {
        expect(alarm.Properties.AlarmActions).toEqual([
          { Ref: expect.stringMatching(/^MonitoringAlarms/) },
        ]);
      }
    });

    it('has one dashboard, and counts plants created, conflicts and webhook outcomes from the logs', () => {
      template().resourceCountIs('AWS::CloudWatch::Dashboard', 1);
      template().hasResourceProperties('AWS::CloudWatch::Dashboard', {
        DashboardName: `PlantStore-${stage.name}`,
      });
      const metrics = Object.values(template().findResources('AWS::Logs::MetricFilter'))
        .filter(
          (filter) =>
            filter.Properties.MetricTransformations[0].MetricNamespace ===
            `PlantStore/${stage.name}`,
        )
        .map((filter) => filter.Properties.MetricTransformations[0].MetricName);
      expect(metrics.sort()).toEqual(
        [
          'AuthorizerFailures',
          // list-plants, get-plant, update-plant, webhook-fanout and replay-stream-failures.
          ...Array.from({ length: 5 }, () => 'ItemsNotPlants'),
          'PlantConflicts',
          'PlantsCreated',
          'PlantsCreated',
          'WebhookRetries',
          'WebhookWaitAtNextAttempt',
          'WebhooksDeadLettered',
          'WebhooksDelivered',
        ].sort(),
      );
    });

    it(
      stage.productionLike
        ? 'publishes every API function behind a live alias the API calls, shifted by CodeDeploy canaries that roll back on alarm'
        : 'deploys every function at once, without aliases or CodeDeploy',
      () => {
        const count = stage.productionLike ? routeFunctionNames.length + 1 : 0;
        template().resourceCountIs('AWS::Lambda::Alias', count);
        template().resourceCountIs('AWS::CodeDeploy::DeploymentGroup', count);
        if (!stage.productionLike) return;
        const groups = Object.values(template().findResources('AWS::CodeDeploy::DeploymentGroup'));
        for (const group of groups) {
          expect(group.Properties).toMatchObject({
            DeploymentConfigName: 'CodeDeployDefault.LambdaCanary10Percent5Minutes',
            AutoRollbackConfiguration: {
              Enabled: true,
              Events: expect.arrayContaining(['DEPLOYMENT_FAILURE', 'DEPLOYMENT_STOP_ON_ALARM']),
            },
            AlarmConfiguration: { Enabled: true, Alarms: expect.any(Array) },
          });
        }
        for (const alias of Object.values(template().findResources('AWS::Lambda::Alias'))) {
          expect(alias.Properties.Name).toBe('live');
        }
        // Each route function rolls back on its crashes and its 5xx answers (which the handlers
        // answer themselves, so Lambda does not count them); the authorizer on its crashes.
        const alarmsPerGroup = groups
          .map((group) => group.Properties.AlarmConfiguration.Alarms.length)
          .sort();
        expect(alarmsPerGroup).toEqual([1, ...routeFunctionNames.map(() => 2)]);
        // The authorizer's canary counts its new version's crashes: Lambda's errors of that
        // version (ExecutedVersion) less its Unauthorized answers, both of that version only.
        const crashes = Object.values(template().findResources('AWS::CloudWatch::Alarm')).find(
          (alarm) => String(alarm.Properties.AlarmDescription).includes('Authorizer is crashing'),
        );
        expect(crashes?.Properties.Metrics).toEqual(
          expect.arrayContaining([
            expect.objectContaining({ Expression: 'FILL(errors, 0) - FILL(refusals, 0)' }),
            expect.objectContaining({
              Id: 'errors',
              MetricStat: expect.objectContaining({
                Metric: expect.objectContaining({
                  MetricName: 'Errors',
                  Dimensions: expect.arrayContaining([
                    { Name: 'ExecutedVersion', Value: expect.anything() },
                  ]),
                }),
              }),
            }),
            expect.objectContaining({
              Id: 'refusals',
              MetricStat: expect.objectContaining({
                Metric: expect.objectContaining({
                  Namespace: `PlantStore/${stage.name}/Deployments`,
                  Dimensions: [{ Name: 'FunctionVersion', Value: expect.anything() }],
                }),
              }),
            }),
          ]),
        );
        // Counted per version: the line's functionVersion is the metric's dimension.
        template().hasResourceProperties('AWS::Logs::MetricFilter', {
          FilterPattern: '{ $.level = "error" }',
          MetricTransformations: [
            Match.objectLike({
              MetricNamespace: `PlantStore/${stage.name}/Deployments`,
              MetricName: 'CreatePlantServerErrors',
              Dimensions: [{ Key: 'FunctionVersion', Value: '$.functionVersion' }],
            }),
          ],
        });
      },
    );
  });

  describe('cdk-nag and cfn-guard', () => {
    const report = () => synthesizedStage(stage.name).validationReport;

    // The report, not the synth's exit code: once anything is acknowledged, the cfn-guard
    // plugin's remaining violations no longer fail a synth.
    it('leaves no unacknowledged AwsSolutions, Serverless or Control Tower (cfn-guard) finding', () => {
      const plugins = report()
        .pluginReports.map((plugin) => plugin.pluginName)
        .sort();
      expect(plugins).toEqual(['AwsSolutions', 'Serverless', 'cdk-validator-cfnguard']);
      for (const plugin of report().pluginReports) {
        expect(plugin.violations ?? []).toEqual([]);
        expect(plugin.conclusion).toBe('success');
      }
    });

    it('acknowledges exactly the reviewed findings, each with a reason', () => {
      const suppressed = report().pluginReports.flatMap(
        (plugin) => plugin.suppressedViolations ?? [],
      );
      const expected = [
        ...acknowledgedFindings,
        ...acknowledgedControlTowerFindings,
        // A stage that allows browsers: its preflights need no token.
        ...(stage.cors === undefined ? [] : ['AwsSolutions-APIG4']),
        // Only a stage that is not production-like keeps its logs less than a year.
        ...(stage.productionLike ? [] : ['cloudwatch_log_group_retention_period_check']),
        // Gradual deploys (production-like only): CodeDeploy's own AWS-managed policy.
        ...(stage.productionLike
          ? [
              'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
            ]
          : []),
      ];
      expect([...new Set(suppressed.map((finding) => finding.ruleName))].sort()).toEqual(
        expected.sort(),
      );
      for (const finding of suppressed) {
        expect(finding.reason.length).toBeGreaterThan(80);
      }
    });

    it('has no acknowledgment that matches no finding', () => {
      const { acknowledgments } = synthesizedStage(stage.name);
      const used = new Set(
        report()
          .pluginReports.flatMap((plugin) => plugin.suppressedViolations ?? [])
          .map((finding) => finding.acknowledgedId),
      );
      expect(acknowledgments.size).toBeGreaterThan(0);
      for (const [id, reason] of acknowledgments) {
        expect(used).toContain(id.replace(/^Annotation::/i, ''));
        expect(reason.length).toBeGreaterThan(80);
      }
    });
  });
});

describe('the bundle options', () => {
  it('build byte for byte the bundle the stack deploys (so benchmarks measure the real thing)', async () => {
    const outdir = mkdtempSync(path.join(tmpdir(), 'plant-store-bundle-'));
    try {
      const outfile = path.join(outdir, 'index.mjs');
      const entry = path.join(repositoryRoot, functionSettings.createPlant.entry);
      await build({
        ...createBuildOptions(entry, outfile),
        absWorkingDir: repositoryRoot,
        logLevel: 'silent',
      });
      expect(readFileSync(outfile, 'utf8')).toBe(
        readBundle(synthesizedStage('dev'), 'CreatePlant'),
      );
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  });
});

describe('cfn-lint, AWS CloudFormation linter, over every stage', () => {
  interface CfnLintMatch {
    readonly Level: string;
    readonly Rule: { readonly Id: string };
    readonly Message: string;
    readonly Filename: string;
  }
  const templateOf = (stage: StageConfig) =>
    path.join(synthesizedStage(stage.name).outdir, `PlantStore-${stage.name}.template.json`);
  const allStages = Object.values(stages);
  let matches: CfnLintMatch[] = [];

  beforeAll(() => {
    for (const stage of allStages) {
      if (!synthesized.has(stage.name)) synthesized.set(stage.name, synthesizeStage(stage));
    }
    // One run for every template: cfn-lint's start-up is most of its time.
    const run = spawnSync(
      findPythonTool('cfn-lint'),
      ['--format', 'json', '--', ...allStages.map(templateOf)],
      { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
    if (run.error !== undefined) throw run.error;
    matches = JSON.parse(run.stdout || '[]') as CfnLintMatch[];
  }, 180_000);

  it('finds no error in any stage template', () => {
    const errors = matches.filter((match) => match.Level === 'Error');
    expect(errors.map((match) => `${match.Rule.Id} ${match.Message}`)).toEqual([]);
  });

  it('ignores exactly the listed rules, each on its one resource type, with a reason', () => {
    const listed = Object.values(cfnLintExceptions);
    for (const stage of allStages) {
      const template = JSON.parse(readFileSync(templateOf(stage), 'utf8')) as {
        Resources: Record<string, { Type: string; Metadata?: Record<string, unknown> }>;
      };
      const ignored = Object.values(template.Resources).flatMap((resource) => {
        const config = resource.Metadata?.['cfn-lint'] as
          | { config?: { ignore_checks?: string[] } }
          | undefined;
        return (config?.config?.ignore_checks ?? []).map((rule) => `${resource.Type} ${rule}`);
      });
      expect(ignored.sort()).toEqual(
        listed.map((exception) => `${exception.resourceType} ${exception.rule}`).sort(),
      );
    }
    for (const exception of listed) {
      expect(exception.reason.length).toBeGreaterThan(80);
      expect(exception.reference).toMatch(/^https:\/\/docs\.aws\.amazon\.com\//);
    }
  });
});
