/**
 * The synthesized stacks' functions (bundled as a deploy bundles them), the plants table and
 * the token issuer; and the bundle options the benchmark builds with, against the deployed bundle.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { Match } from 'aws-cdk-lib/assertions';
import { build } from 'esbuild';
import { type SynthesizedTemplate, samEnvironmentVariables } from '../../beds/sam/sam-services.ts';
import { routeFunctionNames, routes } from '../../functions/shared/http/routes.ts';
import { attemptHoldMilliseconds } from '../../functions/webhook-endpoints/webhook-log.ts';
import { readFanoutConfig } from '../../functions/webhook-fanout/config.ts';
import { createBuildOptions, createRequireBanner } from '../../infra/bundling.ts';
import { type FunctionSettings, functionSettings } from '../../infra/function-settings.ts';
import { repositoryRoot } from '../../infra/plant-store-function.ts';
import { stages } from '../../infra/stages.ts';
import { isEndpointRoute } from '../../infra/throttling.ts';
import { pascalCase, readBundle, synthesizedStages } from './synthesized-stages.ts';

const synthesizedStage = synthesizedStages();

describe.each([stages.dev, stages.prod])('the PlantStore-$name stack', (stage) => {
  const template = () => synthesizedStage(stage.name).template;

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

    it('gives sam local every function with exactly the variables it declares (npm run sam:services)', () => {
      const local = {
        '*': {
          ENDPOINTS_TABLE_NAME: 'webhook-endpoints',
          WEBHOOK_LOG_TABLE_NAME: 'webhook-log',
          DYNAMODB_ENDPOINT: 'http://172.29.213.1:8000',
          SECRETS_KEY_ID: 'arn:aws:kms:us-east-1:123456789012:key/local',
          KMS_ENDPOINT: 'http://172.29.213.1:2',
          DELIVERY_QUEUE_URLS: 'http://172.29.213.1:2/1/deliveries',
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '',
        },
        route: { TABLE_NAME: 'plants', DYNAMODB_ENDPOINT: 'http://172.29.213.1:8000' },
        Authorizer: {
          TOKEN_ISSUER: 'https://plant-store.local',
          TOKEN_AUDIENCE: 'local',
          JWKS_URI: 'http://172.29.213.1:1/jwks',
        },
        WebhookFanout: { DELIVERY_QUEUE_URLS: 'http://172.29.213.1:2/1/deliveries' },
        DeliverWebhook: {
          RETRY_QUEUE_URL: 'http://172.29.213.1:2/1/retries',
          DEAD_LETTER_QUEUE_URL: 'http://172.29.213.1:2/1/dead-letters',
          SUBSCRIBERS: '[]',
          SECRETS_MANAGER_ENDPOINT: 'http://172.29.213.1:2',
        },
        ReplayStreamFailures: {
          STREAM_FAILURES_BUCKET: 'stream-failures',
          DELIVERY_QUEUE_URLS: 'http://172.29.213.1:2/1/deliveries',
          S3_ENDPOINT: 'http://172.29.213.1:2',
        },
      };
      const templateJson = template().toJSON() as SynthesizedTemplate;
      const samEnvironment = samEnvironmentVariables(templateJson, local);
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

    it('gives each plant function its table, and the authorizer its Cognito issuer settings', () => {
      for (const route of routes.filter((entry) => !isEndpointRoute(entry))) {
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

    it("sends a sampling stage's spans to X-Ray's OTLP endpoint in its own Region and partition", () => {
      const functions = Object.values(template().findResources('AWS::Lambda::Function'));
      const endpoints = functions.map(
        (resource) =>
          resource.Properties.Environment?.Variables?.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
      );
      const xray = {
        'Fn::Join': [
          '',
          ['https://xray.', { Ref: 'AWS::Region' }, '.', { Ref: 'AWS::URLSuffix' }, '/v1/traces'],
        ],
      };
      if ((stage.traceSampleRatio ?? 0) > 0) expect(endpoints).toContainEqual(xray);
      else expect(endpoints).not.toContainEqual(xray);
    });

    it.each(
      routeFunctionNames
        .filter((name) => (functionSettings[name] as FunctionSettings).endpointAccess === undefined)
        .map((name) => [name]),
    )('lets %s call exactly its DynamoDB actions on its one table and nothing else', (name) => {
      const prefix = pascalCase(name);
      const policies = template().findResources('AWS::IAM::Policy', {
        Properties: { Roles: [{ Ref: Match.stringLikeRegexp(`^${prefix}Role`) }] },
      });
      const statements = Object.values(policies).flatMap(
        (policy) => policy.Properties.PolicyDocument.Statement,
      );
      const tableActions = (functionSettings[name] as FunctionSettings).tableActions ?? [];
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
          // X-Ray's write actions support no resource-level permissions; with the spans sent to
          // its OTLP endpoint where the stage sends sampled traces (prod).
          Action: [
            ...((stage.traceSampleRatio ?? 0) > 0
              ? ['xray:PutSpans', 'xray:PutSpansForIndexing']
              : []),
            'xray:PutTelemetryRecords',
            'xray:PutTraceSegments',
          ],
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
    });

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
    it('is a Cognito user pool with the plants and webhooks scopes and a client-credentials client for them', () => {
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
      template().hasResourceProperties('AWS::Cognito::UserPoolResourceServer', {
        Identifier: 'webhooks',
        Scopes: [{ ScopeName: 'manage', ScopeDescription: Match.anyValue() }],
      });
      template().resourceCountIs('AWS::Cognito::UserPoolClient', 1);
      const scope = (server: string, name: string) => ({
        'Fn::Join': ['', [{ Ref: Match.stringLikeRegexp(`^TokenIssuerUserPool${server}`) }, name]],
      });
      template().hasResourceProperties('AWS::Cognito::UserPoolClient', {
        AllowedOAuthFlows: ['client_credentials'],
        AllowedOAuthFlowsUserPoolClient: true,
        AllowedOAuthScopes: [
          scope('ResourceServer[0-9A-F]', '/read'),
          scope('ResourceServer[0-9A-F]', '/write'),
          scope('ResourceServerwebhooks', '/manage'),
        ],
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
        ? 'retains the app client, resource servers and domain with the pool'
        : 'deletes the app client, resource servers and domain with the stack',
      () => {
        for (const type of [
          'AWS::Cognito::UserPoolClient',
          'AWS::Cognito::UserPoolResourceServer',
          'AWS::Cognito::UserPoolDomain',
        ]) {
          const resources = Object.values(template().findResources(type));
          expect(resources.length).toBe(type.endsWith('ResourceServer') ? 2 : 1);
          for (const resource of resources) {
            expect(resource.DeletionPolicy ?? 'Delete').toBe(
              stage.productionLike ? 'Retain' : 'Delete',
            );
          }
        }
      },
    );

    it('has a hosted domain unique to the stage and account', () => {
      template().hasResourceProperties('AWS::Cognito::UserPoolDomain', {
        Domain: { 'Fn::Join': ['', [`plant-store-${stage.name}-`, { Ref: 'AWS::AccountId' }]] },
      });
    });
  });
});

describe('the delivery function', () => {
  it("ends before its attempt's claim is free to a copy of its message", () => {
    // A copy waits out the claim: by then the invocation of the attempt has surely ended.
    expect(functionSettings.deliverWebhook.timeoutSeconds * 1000).toBeLessThanOrEqual(
      attemptHoldMilliseconds,
    );
  });
});

describe('the bundles', () => {
  it('are the same for every stage: each function deploys one bundle to dev and prod', () => {
    const assetPaths = (name: string) =>
      Object.entries(synthesizedStage(name).template.findResources('AWS::Lambda::Function'))
        .map(
          ([id, resource]) =>
            `${id.replace(/[0-9A-F]{8}$/, '')} ${resource.Metadata?.['aws:asset:path']}`,
        )
        .sort();
    expect(assetPaths('dev')).toHaveLength(Object.keys(functionSettings).length);
    expect(assetPaths('prod')).toEqual(assetPaths('dev'));
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
