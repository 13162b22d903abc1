/**
 * The dev stage deployed for real: the CDK CLI bootstraps MiniStack (an AWS emulator on one port
 * of 127.0.0.1, `local/ministack/ministack.ts`) and deploys the app's dev stack onto it, from
 * the assembly the run synthesized, adapted in one named place
 * (`local/ministack/ministack-differences.ts`) whose every difference is printed. Then, since
 * an emulator may report success for what it did not build, the resource graph is checked
 * through the emulator's AWS APIs; the first requests are timed; and the smoke command a team
 * runs after a real `cdk deploy` (`npm run smoke -- --stack PlantStore-dev`) runs the contract
 * suite against it. The stack is destroyed and MiniStack stopped afterwards, also on failure.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  APIGatewayClient,
  GetAuthorizersCommand,
  GetResourcesCommand,
  GetRestApisCommand,
  GetStageCommand,
  GetUsagePlanKeysCommand,
  GetUsagePlansCommand,
} from '@aws-sdk/client-api-gateway';
import {
  CloudFormationClient,
  DescribeStackResourcesCommand,
} from '@aws-sdk/client-cloudformation';
import { CloudWatchClient, DescribeAlarmsCommand } from '@aws-sdk/client-cloudwatch';
import { CloudWatchLogsClient, DescribeLogGroupsCommand } from '@aws-sdk/client-cloudwatch-logs';
import { DescribeKeyCommand, KMSClient, ListKeysCommand } from '@aws-sdk/client-kms';
import {
  InvokeCommand,
  LambdaClient,
  ListEventSourceMappingsCommand,
  ListFunctionsCommand,
} from '@aws-sdk/client-lambda';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, ListQueuesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { ListWebACLsCommand, WAFV2Client, type WebACL } from '@aws-sdk/client-wafv2';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { clientKeyValue, sharedClient } from '../../functions/authorizer/client-keys.ts';
import { routes } from '../../functions/shared/http/routes.ts';
import { repositoryRoot } from '../../infra/plant-store-function.ts';
import { usagePlanName } from '../../infra/plants-api.ts';
import { stages } from '../../infra/stages.ts';
import { clientThrottling, routeThrottling, tokenLimits } from '../../infra/throttling.ts';
import { type MiniStack, recordStack, startMiniStack } from '../../local/ministack/ministack.ts';
import {
  miniStackAssemblyOf,
  type TemplateDifference,
} from '../../local/ministack/ministack-differences.ts';
import { emulatedStageAccess } from '../../local/smoke.ts';
import { recordAwsCalls } from '../permissions/recordings.ts';
import { assemblyDirectory } from '../support/synthesized-assembly.ts';

const run = promisify(execFile);
const stackName = 'PlantStore-dev';
const figures: Record<string, number | string> = {};
const seconds = (started: number) => Math.round((performance.now() - started) / 100) / 10;

let ministack: MiniStack | undefined;
let work: string;
let deployAssembly: string;
let differences: TemplateDifference[] = [];
/** A token of the stage's own client, from the first request's test. */
let clientToken = '';
let deployed = false;

/** The CDK CLI of the project, against the emulator. */
function cdk(args: readonly string[]) {
  return run(path.join(repositoryRoot, 'node_modules/.bin/cdk'), [...args, '--no-notices'], {
    cwd: work,
    env: { ...process.env, ...ministack?.clientEnvironment, CDK_DISABLE_VERSION_CHECK: 'true' },
    maxBuffer: 64 * 1024 * 1024,
  });
}

beforeAll(async () => {
  const begun = performance.now();
  work = mkdtempSync(path.join(tmpdir(), 'plant-store-deployed-'));
  // Every AWS call the stage's functions and the smoke make, for the permissions tier.
  recordAwsCalls('deployed');
  ministack = await startMiniStack(path.join(work, 'state'));
  figures.emulatorSeconds = seconds(begun);
  // The clients below, and the smoke command, talk to the emulator.
  Object.assign(process.env, ministack.clientEnvironment);
  deployAssembly = path.join(work, 'cdk.out');
  differences = miniStackAssemblyOf(assemblyDirectory(), 'dev', deployAssembly);
  console.info(
    `Deploying ${stackName} on MiniStack with ${differences.length} differences from AWS:\n${differences
      .map((difference) => `  ${difference.resource}: ${difference.change} (${difference.reason})`)
      .join('\n')}`,
  );
  let started = performance.now();
  // From the assembly: without --app, bootstrap would synthesize the app again.
  await cdk([
    'bootstrap',
    `aws://${ministack.account}/${ministack.region}`,
    '--app',
    deployAssembly,
  ]);
  figures.bootstrapSeconds = seconds(started);
  started = performance.now();
  await cdk(['deploy', stackName, '--app', deployAssembly, '--require-approval', 'never']);
  figures.deploySeconds = seconds(started);
  deployed = true;
  await recordStack(
    ministack,
    stackName,
    JSON.parse(readFileSync(path.join(deployAssembly, `${stackName}.template.json`), 'utf8')),
  );
}, 600_000);

afterAll(async () => {
  try {
    if (deployed) {
      const started = performance.now();
      await cdk(['destroy', stackName, '--app', deployAssembly, '--force']);
      figures.destroySeconds = seconds(started);
    }
  } finally {
    await ministack?.stop();
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
    console.info(`deployed on MiniStack: ${JSON.stringify(figures)}`);
  }
}, 300_000);

const template = () =>
  JSON.parse(
    readFileSync(path.join(assemblyDirectory(), `${stackName}.template.json`), 'utf8'),
  ) as {
    Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
  };

describe('the differences from AWS', () => {
  it('are named one by one, and the synthesized template still has what they change', () => {
    const removed = differences.filter((difference) => difference.change === 'removed');
    expect(removed.map((difference) => difference.reason)).toEqual([
      "MiniStack's CloudFormation does not know the resource type",
      expect.stringContaining('PlantStore-dev-PlantsTable-SystemError-Count-Warning'),
    ]);
    expect(
      differences
        .filter((difference) => difference.change === 'WEBHOOK_ENDPOINT_URLS=local')
        .map((difference) => difference.resource.replace(/[0-9A-F]{8}$/, '')),
    ).toEqual(['DeliverWebhook', 'CreateWebhookEndpoint', 'UpdateWebhookEndpoint']);
    const original = template();
    const keyed = differences.filter(
      (difference) => difference.change === 'ApiKeyRequired removed',
    );
    expect(keyed).toHaveLength(routes.length);
    for (const difference of keyed) {
      expect(original.Resources[difference.resource]?.Properties.ApiKeyRequired).toBe(true);
    }
    const [association, ...alarms] = removed;
    expect(original.Resources[association?.resource ?? '']?.Properties.WebACLArn).toEqual({
      'Fn::GetAtt': [expect.stringMatching(/^ApiClientRateLimitsWebAcl/), 'Arn'],
    });
    for (const difference of alarms) {
      expect(original.Resources[difference.resource]?.Properties.Metrics).toBeDefined();
    }
    for (const resource of Object.values(original.Resources)) {
      const variables = (resource.Properties.Environment as { Variables?: object } | undefined)
        ?.Variables;
      expect(variables ?? {}).not.toHaveProperty('WEBHOOK_ENDPOINT_URLS');
    }
  });
});

describe('what MiniStack built, read back through its AWS APIs', () => {
  it('puts the TOKEN authorizer on every method but the preflights, each with its throttling', async () => {
    const apiGateway = new APIGatewayClient({});
    try {
      const { items: apis = [] } = await apiGateway.send(new GetRestApisCommand({}));
      const api = apis.find((candidate) => candidate.name === 'plant-store-dev');
      expect(api?.id).toBeDefined();
      const restApiId = api?.id as string;
      const { items: authorizers = [] } = await apiGateway.send(
        new GetAuthorizersCommand({ restApiId }),
      );
      expect(
        authorizers.map((authorizer) => [authorizer.type, authorizer.authorizerResultTtlInSeconds]),
      ).toEqual([['TOKEN', 300]]);
      const { items: resources = [] } = await apiGateway.send(
        new GetResourcesCommand({ restApiId, embed: ['methods'], limit: 500 }),
      );
      const methods = resources.flatMap((resource) =>
        Object.entries(resource.resourceMethods ?? {}).map(([method, settings]) => ({
          route: `${method} ${resource.path}`,
          authorization: settings.authorizationType,
          authorizerId: settings.authorizerId,
        })),
      );
      for (const route of routes) {
        expect(methods).toContainEqual({
          route: `${route.method} ${route.path}`,
          authorization: 'CUSTOM',
          authorizerId: authorizers[0]?.id,
        });
      }
      expect(
        methods
          .filter((method) => !method.route.startsWith('OPTIONS'))
          .map((method) => method.route)
          .sort(),
      ).toEqual(routes.map((route) => `${route.method} ${route.path}`).sort());

      const { methodSettings = {} } = await apiGateway.send(
        new GetStageCommand({ restApiId, stageName: 'dev' }),
      );
      for (const route of routes) {
        const expected = routeThrottling(route, {
          plants: stages.dev.throttling,
          ...(stages.dev.webhookEndpointThrottling === undefined
            ? {}
            : { webhookEndpoints: stages.dev.webhookEndpointThrottling }),
        });
        // A route's own settings, or the stage's (`*/*`) where it has none.
        const key = `/${route.path.replaceAll('/', '~1')}/${route.method}`;
        const settings = methodSettings[key] ?? methodSettings['*/*'];
        expect([key, settings?.throttlingRateLimit, settings?.throttlingBurstLimit]).toEqual([
          key,
          expected.rateLimit,
          expected.burstLimit,
        ]);
      }
    } finally {
      apiGateway.destroy();
    }
  });

  it('maps the stream to the fan-out and every queue to the delivery, each as the stack says', async () => {
    const lambda = new LambdaClient({});
    try {
      const { EventSourceMappings: mappings = [] } = await lambda.send(
        new ListEventSourceMappingsCommand({}),
      );
      const stream = mappings.filter((mapping) => mapping.EventSourceArn?.includes(':dynamodb:'));
      expect(stream).toHaveLength(1);
      expect(stream[0]).toMatchObject({
        State: 'Enabled',
        FunctionArn: expect.stringContaining('WebhookFanout'),
        BatchSize: 100,
        BisectBatchOnFunctionError: true,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        DestinationConfig: { OnFailure: { Destination: expect.stringMatching(/^arn:aws:s3:::/) } },
      });
      const queues = mappings.filter((mapping) => mapping.EventSourceArn?.includes(':sqs:'));
      // Dev's two first-attempt queues (`webhookDeliveries`) and the retries'.
      expect(queues).toHaveLength((stages.dev.webhookDeliveries?.queues ?? 1) + 1);
      for (const mapping of queues) {
        expect(mapping).toMatchObject({
          State: 'Enabled',
          FunctionArn: expect.stringContaining('DeliverWebhook'),
          BatchSize: 10,
          FunctionResponseTypes: ['ReportBatchItemFailures'],
        });
      }
      const { Functions: functions = [] } = await lambda.send(new ListFunctionsCommand({}));
      const ours = functions.filter((fn) => fn.FunctionName?.startsWith(stackName));
      expect(ours).toHaveLength(19);
      for (const fn of ours)
        expect([fn.FunctionName, fn.Runtime]).toEqual([fn.FunctionName, 'nodejs24.x']);
    } finally {
      lambda.destroy();
    }
  });

  it('makes the web ACL with the per-client limits (its association with the stage removed above)', async () => {
    const waf = new WAFV2Client({});
    try {
      const { WebACLs = [] } = await waf.send(new ListWebACLsCommand({ Scope: 'REGIONAL' }));
      const summary = WebACLs.find((acl) => acl.Name === 'plant-store-dev');
      expect(summary?.Id).toBeDefined();
      // MiniStack answers the byte match's SearchString as text, where AWS sends the blob in
      // base64: the SDK cannot read that answer, so the test reads its JSON itself.
      const answer = await fetch(process.env.AWS_ENDPOINT_URL as string, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-amz-json-1.1',
          'X-Amz-Target': 'AWSWAF_20190729.GetWebACL',
          // The emulator reads the service from the credential scope and checks no signature.
          Authorization:
            'AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/wafv2/aws4_request, SignedHeaders=host, Signature=0',
        },
        body: JSON.stringify({ Scope: 'REGIONAL', Name: summary?.Name, Id: summary?.Id }),
      });
      const { WebACL } = (await answer.json()) as { WebACL?: WebACL };
      const limits = tokenLimits({ plants: stages.dev.throttling });
      expect(
        (WebACL?.Rules ?? []).map((rule) => [
          rule.Name,
          rule.Statement?.RateBasedStatement?.Limit,
          rule.Statement?.RateBasedStatement?.CustomKeys?.[0]?.Header?.Name,
          rule.Action?.Block?.CustomResponse?.ResponseCode,
        ]),
      ).toEqual(
        limits.map((limit) => [
          `per-token-${limit.group}`,
          limit.requestsPerWindow,
          'authorization',
          429,
        ]),
      );
    } finally {
      waf.destroy();
    }
  });

  it('makes the delivery queues and the retries’ with their dead letters, and the secrets’ key', async () => {
    const sqs = new SQSClient({});
    const kms = new KMSClient({});
    try {
      const { QueueUrls = [] } = await sqs.send(new ListQueuesCommand({}));
      const attributes = await Promise.all(
        QueueUrls.map(async (QueueUrl) => {
          const { Attributes = {} } = await sqs.send(
            new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['All'] }),
          );
          return { QueueUrl, ...Attributes };
        }),
      );
      const redriven = attributes.filter((queue) => queue.RedrivePolicy !== undefined);
      const deliveryQueues = stages.dev.webhookDeliveries?.queues ?? 1;
      expect(redriven).toHaveLength(deliveryQueues + 1);
      for (const queue of redriven) {
        expect(JSON.parse(queue.RedrivePolicy as string)).toMatchObject({ maxReceiveCount: 5 });
        expect(queue.VisibilityTimeout).toBe('180');
      }
      expect(attributes).toHaveLength(deliveryQueues + 2);
      const { Keys = [] } = await kms.send(new ListKeysCommand({}));
      const keys = await Promise.all(
        Keys.map(
          async (key) => (await kms.send(new DescribeKeyCommand({ KeyId: key.KeyId }))).KeyMetadata,
        ),
      );
      expect(keys.filter((key) => key?.Description?.includes('webhook endpoints'))).toEqual([
        expect.objectContaining({
          Enabled: true,
          KeyUsage: 'ENCRYPT_DECRYPT',
          KeySpec: 'SYMMETRIC_DEFAULT',
        }),
      ]);
    } finally {
      sqs.destroy();
      kms.destroy();
    }
  });

  it('keeps every log group for the stage’s retention, and deploys every alarm but those named above', async () => {
    const logs = new CloudWatchLogsClient({});
    const cloudWatch = new CloudWatchClient({});
    try {
      const groups = [];
      let nextToken: string | undefined;
      do {
        const page = await logs.send(
          new DescribeLogGroupsCommand({ ...(nextToken ? { nextToken } : {}) }),
        );
        groups.push(...(page.logGroups ?? []));
        nextToken = page.nextToken;
      } while (nextToken !== undefined);
      const templateGroups = Object.values(template().Resources).filter(
        (resource) => resource.Type === 'AWS::Logs::LogGroup',
      );
      expect(groups.length).toBeGreaterThanOrEqual(templateGroups.length);
      for (const group of groups) {
        expect([group.logGroupName, group.retentionInDays]).toEqual([
          group.logGroupName,
          stages.dev.logRetentionDays,
        ]);
      }
      const alarms = [];
      let next: string | undefined;
      do {
        const page = await cloudWatch.send(
          new DescribeAlarmsCommand({ ...(next ? { NextToken: next } : {}) }),
        );
        alarms.push(...(page.MetricAlarms ?? []), ...(page.CompositeAlarms ?? []));
        next = page.NextToken;
      } while (next !== undefined);
      const expected = Object.values(template().Resources).filter(
        (resource) => resource.Type === 'AWS::CloudWatch::Alarm',
      ).length;
      const removed = differences.filter(
        (difference) => difference.change === 'removed' && difference.reason.startsWith('metric'),
      ).length;
      expect(alarms).toHaveLength(expected - removed);
    } finally {
      logs.destroy();
      cloudWatch.destroy();
    }
  });
});

describe('the deployed stage', () => {
  it('answers its first (cold) request and warm ones through the emulated gateway (figures)', async () => {
    const { token, stageUrl } = await emulatedStageAccess(
      stackName,
      'dev',
      process.env.AWS_ENDPOINT_URL as string,
      'plants/read',
    );
    const url = `${stageUrl}/plants?limit=5`;
    const timed = async () => {
      const started = performance.now();
      const answer = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
      await answer.text();
      expect(answer.status).toBe(200);
      return performance.now() - started;
    };
    figures.coldRequestMilliseconds = Math.round(await timed());
    // 100 warm ones, eight a second: within the route's 10 a second (its throttling answers 429
    // beyond, as the emulator honours it).
    const warm: number[] = [];
    for (let request = 0; request < 100; request += 1) {
      const started = performance.now();
      warm.push(await timed());
      await new Promise((resolve) =>
        setTimeout(resolve, Math.max(0, 125 - (performance.now() - started))),
      );
    }
    warm.sort((a, b) => a - b);
    figures.warmP50Milliseconds = Math.round((warm[49] ?? 0) * 10) / 10;
    figures.warmP99Milliseconds = Math.round((warm[98] ?? 0) * 10) / 10;
    clientToken = token;
  }, 120_000);

  it('has the authorizer add the client’s key to the usage plan, which limits each client per method', async () => {
    const apiGateway = new APIGatewayClient({});
    try {
      const planName = usagePlanName('dev');
      const { items: plans = [] } = await apiGateway.send(new GetUsagePlansCommand({}));
      const plan = plans.find((candidate) => candidate.name === planName);
      // MiniStack keeps each method's throttling as CloudFormation spells it (`BurstLimit`, where
      // AWS answers `burstLimit`), which the SDK cannot read: the test reads its JSON itself.
      const answer = await fetch(`${process.env.AWS_ENDPOINT_URL}/usageplans/${plan?.id}`, {
        headers: {
          // The emulator reads the service from the credential scope and checks no signature.
          Authorization:
            'AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/apigateway/aws4_request, SignedHeaders=host, Signature=0',
        },
      });
      const raw = (await answer.json()) as {
        apiStages?: { throttle?: Record<string, { BurstLimit?: number; RateLimit?: number }> }[];
      };
      const budgets = { plants: stages.dev.throttling };
      expect(raw.apiStages?.[0]?.throttle).toEqual(
        Object.fromEntries(
          routes.map((route) => {
            const limits = clientThrottling(route, budgets);
            const settings = { BurstLimit: limits.burstLimit, RateLimit: limits.rateLimit };
            return [`${route.path}/${route.method}`, settings];
          }),
        ),
      );
      const { items: keys = [] } = await apiGateway.send(
        new GetUsagePlanKeysCommand({ usagePlanId: plan?.id as string }),
      );
      // The token's client, as the authorizer names it: its issuer and client id.
      const claims = JSON.parse(
        Buffer.from(clientToken.split('.')[1] ?? '', 'base64url').toString('utf8'),
      ) as { iss: string; client_id: string };
      expect(keys.map((key) => key.value).sort()).toEqual(
        [
          clientKeyValue(planName, sharedClient),
          clientKeyValue(planName, `${claims.iss} ${claims.client_id}`),
        ].sort(),
      );
    } finally {
      apiGateway.destroy();
    }
  });

  it('replays a stream batch kept in its bucket when the replay is invoked by hand (docs/webhooks.md)', async () => {
    const cloudFormation = new CloudFormationClient({});
    const s3 = new S3Client({ forcePathStyle: true });
    const lambda = new LambdaClient({});
    try {
      const { StackResources = [] } = await cloudFormation.send(
        new DescribeStackResourcesCommand({ StackName: stackName }),
      );
      const physical = (type: string, prefix = '') =>
        StackResources.find(
          (resource) =>
            resource.ResourceType === type && resource.LogicalResourceId?.startsWith(prefix),
        )?.PhysicalResourceId as string;
      const record = {
        eventID: 'kept-by-hand',
        eventName: 'INSERT',
        dynamodb: { SequenceNumber: '1', NewImage: marshall({ id: 7_770_001, name: 'Kept' }) },
      };
      await s3.send(
        new PutObjectCommand({
          Bucket: physical('AWS::S3::Bucket', 'WebhooksStreamFailures'),
          Key: 'aws/lambda/mapping/shard/2026-11-25T00:00:00.000Z-by-hand',
          Body: JSON.stringify({ payload: JSON.stringify({ Records: [record] }) }),
        }),
      );
      const { Payload } = await lambda.send(
        new InvokeCommand({
          FunctionName: physical('AWS::Lambda::Function', 'ReplayStreamFailures'),
          Payload: new TextEncoder().encode('{}'),
        }),
      );
      expect(JSON.parse(new TextDecoder().decode(Payload))).toMatchObject({
        replayedBatches: 1,
        newPlants: 1,
        remainingBatches: 0,
      });
    } finally {
      for (const client of [cloudFormation, s3, lambda]) client.destroy();
    }
  }, 300_000);

  it('passes the smoke command a team runs after cdk deploy: the contract suite', async () => {
    const started = performance.now();
    const smoke = spawn('npm', ['run', '-s', 'smoke', '--', '--stack', stackName], {
      cwd: repositoryRoot,
      env: process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    smoke.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    smoke.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    const code = await new Promise<number | null>((resolve) => smoke.once('exit', resolve));
    figures.smokeSeconds = seconds(started);
    console.info(output.slice(-6000));
    expect([code, output.includes('failed')]).toEqual([0, false]);
    expect(output).toMatch(/Tests:\s+(\d+ skipped, )?\d+ passed/);
  }, 600_000);
});
