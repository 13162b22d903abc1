/**
 * The delivery rehearsed on MiniStack (`npm run test:delivery`): the pipeline's own npm scripts in
 * its order (one synth, dev deployed and smoked, prod deployed from the same assembly and smoked
 * read-only), MiniStack's differences applied in their one place. Then prod as the template says
 * it, read back through the AWS APIs, both stages destroyed, and what prod retains removed
 * explicitly, each named.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  CloudFormationClient,
  ListStackResourcesCommand,
  type StackResourceSummary,
} from '@aws-sdk/client-cloudformation';
import { CloudWatchClient, DescribeAlarmsCommand } from '@aws-sdk/client-cloudwatch';
import {
  CloudWatchLogsClient,
  DeleteLogGroupCommand,
  DescribeLogGroupsCommand,
} from '@aws-sdk/client-cloudwatch-logs';
import {
  CognitoIdentityProviderClient,
  DeleteUserPoolCommand,
  DeleteUserPoolDomainCommand,
  DescribeUserPoolCommand,
  UpdateUserPoolCommand,
} from '@aws-sdk/client-cognito-identity-provider';
import {
  DeleteTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  UpdateTableCommand,
} from '@aws-sdk/client-dynamodb';
import { KMSClient, ScheduleKeyDeletionCommand } from '@aws-sdk/client-kms';
import { GetFunctionCommand, LambdaClient } from '@aws-sdk/client-lambda';
import {
  DeleteBucketCommand,
  DeleteObjectsCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { DeleteQueueCommand, GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { deployRoleName, diffRoleName, pipeline } from '../../infra/pipeline.ts';
import { repositoryRoot } from '../../infra/plant-store-function.ts';
import { type MiniStack, recordStack, startMiniStack } from '../../local/ministack/ministack.ts';
import {
  miniStackAssemblyOf,
  type TemplateDifference,
} from '../../local/ministack/ministack-differences.ts';
import { recordAwsCalls, roleArn } from '../permissions/recordings.ts';

const run = promisify(execFile);
let ministack: MiniStack;
let work: string;
let environment: NodeJS.ProcessEnv;
let differences: TemplateDifference[] = [];
const deployed = new Set<string>();
const figures: Record<string, number> = {};

type Resources = Record<
  string,
  { Type: string; DeletionPolicy?: string; Properties?: Record<string, unknown> }
>;

/**
 * An npm script of the pipeline, as its workflow runs it, with the credentials of the role its job
 * assumes (the recorder attributes its calls to that role); resolves its output.
 */
async function npmRun(role: string, script: string, ...args: string[]): Promise<string> {
  const started = performance.now();
  ministack.recorder?.label(`${script} ${args.join(' ')}`.trim());
  const { stdout, stderr } = await run('npm', ['run', '-s', script, '--', ...args], {
    cwd: repositoryRoot,
    env: { ...environment, ...ministack.recorder?.credentialsOf(roleArn(role)) },
    maxBuffer: 64 * 1024 * 1024,
  });
  figures[`${script} ${args.join(' ')}`.trim()] = Math.round((performance.now() - started) / 1000);
  return `${stdout}${stderr}`;
}

function cdk(args: readonly string[]) {
  return run(path.join(repositoryRoot, 'node_modules/.bin/cdk'), [...args, '--no-notices'], {
    cwd: work,
    env: environment,
    maxBuffer: 64 * 1024 * 1024,
  });
}

function client<Client>(make: new (config: object) => Client): Client {
  return new make({});
}

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'plant-store-delivery-'));
  // Every AWS call of the pipeline's steps, for the permissions tier.
  recordAwsCalls('delivery');
  ministack = await startMiniStack(path.join(work, 'state'));
  // The clients below, and every script, talk to the emulator.
  Object.assign(process.env, ministack.clientEnvironment);
  environment = {
    ...process.env,
    ...ministack.clientEnvironment,
    CDK_DISABLE_VERSION_CHECK: 'true',
    RELEASE_ASSEMBLY: path.join(work, 'synth'),
  };
  // The account's one-time step, before any pipeline run.
  await cdk(['bootstrap', `aws://${ministack.account}/${ministack.region}`]);
}, 300_000);

afterAll(async () => {
  try {
    for (const stage of [...deployed].reverse()) {
      await cdk(['destroy', `PlantStore-${stage}`, '--app', 'ministack', '--force']);
    }
  } finally {
    await ministack?.stop();
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
    console.info(`delivery rehearsal, seconds: ${JSON.stringify(figures)}`);
  }
}, 600_000);

const templateOf = (stage: string) =>
  JSON.parse(
    readFileSync(path.join(work, 'synth', `PlantStore-${stage}.template.json`), 'utf8'),
  ) as { Resources: Resources };

async function stackResources(stage: string): Promise<StackResourceSummary[]> {
  const cloudFormation = client(CloudFormationClient);
  const summaries: StackResourceSummary[] = [];
  let next: string | undefined;
  do {
    const page = await cloudFormation.send(
      new ListStackResourcesCommand({ StackName: `PlantStore-${stage}`, NextToken: next }),
    );
    summaries.push(...(page.StackResourceSummaries ?? []));
    next = page.NextToken;
  } while (next !== undefined);
  cloudFormation.destroy();
  return summaries;
}

it('takes one synth through dev and its smoke, then the same code to prod and its read-only smoke', async () => {
  await npmRun(deployRoleName('dev'), 'release:synth');
  // What the workflow would deploy, adapted for MiniStack in the differences' one place.
  differences = miniStackAssemblyOf(
    path.join(work, 'synth'),
    pipeline.stages,
    path.join(work, 'ministack'),
  );
  environment.RELEASE_ASSEMBLY = path.join(work, 'ministack');
  const kinds = Map.groupBy(differences, ({ change, reason }) => `${change} (${reason})`);
  console.info(
    `MiniStack's differences: ${[...kinds].map(([kind, list]) => `${list.length} × ${kind}`).join('; ')}`,
  );
  expect([...kinds.keys()]).toEqual(
    expect.arrayContaining([
      'removed (MiniStack has no CodeDeploy: a new version is live at once, with no canary)',
      'CodeDeployLambdaAliasUpdate removed (MiniStack has no CodeDeploy: a new version is live at once, with no canary)',
    ]),
  );

  for (const stage of pipeline.stages) {
    const stackName = `PlantStore-${stage}`;
    await npmRun(deployRoleName(stage), 'release:deploy', stackName);
    deployed.add(stage);
    await recordStack(
      ministack,
      stackName,
      JSON.parse(readFileSync(path.join(work, 'ministack', `${stackName}.template.json`), 'utf8')),
    );
    const smoke = await npmRun(deployRoleName(stage), 'smoke', '--stack', stackName);
    expect(smoke).toMatch(/Tests:\s+(\d+ skipped, )?\d+ passed/);
    expect(smoke).not.toMatch(/failed/);
    if (stage === 'prod') {
      // Production-like: the smoke only reads and refuses there.
      expect(smoke).toMatch(/\d+ skipped/);
    }
  }

  // The same assembly promoted: every function's code is the same bytes in dev and in prod.
  const lambda = client(LambdaClient);
  const codeOf = async (stage: string) => {
    const functions = (await stackResources(stage)).filter(
      (resource) => resource.ResourceType === 'AWS::Lambda::Function',
    );
    return Object.fromEntries(
      await Promise.all(
        functions.map(async (resource) => {
          const { Configuration } = await lambda.send(
            new GetFunctionCommand({ FunctionName: resource.PhysicalResourceId }),
          );
          return [resource.LogicalResourceId, Configuration?.CodeSha256];
        }),
      ),
    );
  };
  // A pull request's diff of each stage, with the read-only role.
  for (const stage of pipeline.stages) {
    expect(await npmRun(diffRoleName, 'release:diff', `PlantStore-${stage}`)).toMatch(
      /differences/i,
    );
  }
  const [devCode, prodCode] = await Promise.all(pipeline.stages.map(codeOf));
  lambda.destroy();
  expect(Object.keys(prodCode ?? {}).length).toBeGreaterThanOrEqual(19);
  expect(prodCode).toEqual(devCode);
}, 1_200_000);

it('builds prod as its template says: protection and retention, the web ACL, every alarm, a year of logs', async () => {
  const resources = await stackResources('prod');
  const physical = (type: string) => resources.filter((resource) => resource.ResourceType === type);
  // The plants and the endpoints are protected; the webhook log, 7 days of expiring items, is not.
  const template = templateOf('prod').Resources;
  const dynamo = client(DynamoDBClient);
  const tables = physical('AWS::DynamoDB::Table');
  const protection = await Promise.all(
    tables.map(async (table) => {
      const { Table } = await dynamo.send(
        new DescribeTableCommand({ TableName: table.PhysicalResourceId }),
      );
      return [table.LogicalResourceId, Table?.DeletionProtectionEnabled === true];
    }),
  );
  dynamo.destroy();
  expect(Object.fromEntries(protection)).toEqual(
    Object.fromEntries(
      tables.map((table) => [
        table.LogicalResourceId,
        template[table.LogicalResourceId ?? '']?.Properties?.DeletionProtectionEnabled === true,
      ]),
    ),
  );
  expect(protection.filter(([, isProtected]) => isProtected)).toHaveLength(2);
  const cognito = client(CognitoIdentityProviderClient);
  const [pool] = physical('AWS::Cognito::UserPool');
  const { UserPool } = await cognito.send(
    new DescribeUserPoolCommand({ UserPoolId: pool?.PhysicalResourceId }),
  );
  expect(UserPool?.DeletionProtection).toBe('ACTIVE');
  cognito.destroy();
  const logs = client(CloudWatchLogsClient);
  const logGroups = physical('AWS::Logs::LogGroup');
  for (const group of logGroups) {
    const { logGroups: found = [] } = await logs.send(
      new DescribeLogGroupsCommand({ logGroupNamePrefix: group.PhysicalResourceId }),
    );
    expect({ group: group.LogicalResourceId, days: found[0]?.retentionInDays }).toEqual({
      group: group.LogicalResourceId,
      days: 365,
    });
  }
  logs.destroy();
  expect(physical('AWS::WAFv2::WebACL')).toHaveLength(1);
  // Every alarm the template has, but the metric math MiniStack refuses.
  const cloudWatch = client(CloudWatchClient);
  const names: string[] = [];
  let next: string | undefined;
  do {
    const page = await cloudWatch.send(new DescribeAlarmsCommand({ NextToken: next }));
    names.push(...(page.MetricAlarms ?? []).map((alarm) => alarm.AlarmName ?? ''));
    next = page.NextToken;
  } while (next !== undefined);
  cloudWatch.destroy();
  const expected = Object.values(templateOf('prod').Resources).filter(
    (resource) => resource.Type === 'AWS::CloudWatch::Alarm' && !resource.Properties?.Metrics,
  );
  expect(names.filter((name) => name.startsWith('PlantStore-prod'))).toHaveLength(expected.length);
}, 300_000);

it('destroys both stages; what prod retains stays, and is removed explicitly, each named', async () => {
  const before = await stackResources('prod');
  for (const stage of [...deployed].reverse()) {
    await cdk(['destroy', `PlantStore-${stage}`, '--app', 'ministack', '--force']);
    deployed.delete(stage);
  }
  const retainedIds = Object.entries(templateOf('prod').Resources)
    .filter(([, resource]) => resource.DeletionPolicy === 'Retain')
    .map(([id]) => id);
  const retained = before.filter((resource) =>
    retainedIds.includes(resource.LogicalResourceId ?? ''),
  );
  const removed: string[] = [];
  const remove = async (resource: StackResourceSummary, action: () => Promise<unknown>) => {
    await action();
    removed.push(`${resource.ResourceType} ${resource.PhysicalResourceId}`);
  };
  const dynamo = client(DynamoDBClient);
  const cognito = client(CognitoIdentityProviderClient);
  const sqs = client(SQSClient);
  const kms = client(KMSClient);
  const s3 = new S3Client({ forcePathStyle: true });
  const logs = client(CloudWatchLogsClient);
  const pool = retained.find((resource) => resource.ResourceType === 'AWS::Cognito::UserPool');
  for (const resource of retained) {
    const id = resource.PhysicalResourceId as string;
    switch (resource.ResourceType) {
      case 'AWS::DynamoDB::Table':
        await remove(resource, async () => {
          await dynamo.send(
            new UpdateTableCommand({ TableName: id, DeletionProtectionEnabled: false }),
          );
          await dynamo.send(new DeleteTableCommand({ TableName: id }));
        });
        break;
      case 'AWS::Cognito::UserPoolDomain':
        await remove(resource, () =>
          cognito.send(
            new DeleteUserPoolDomainCommand({ Domain: id, UserPoolId: pool?.PhysicalResourceId }),
          ),
        );
        break;
      case 'AWS::SQS::Queue':
        await remove(resource, async () => {
          const url = id.startsWith('http')
            ? id
            : (await sqs.send(new GetQueueUrlCommand({ QueueName: id }))).QueueUrl;
          await sqs.send(new DeleteQueueCommand({ QueueUrl: url }));
        });
        break;
      case 'AWS::KMS::Key':
        await remove(resource, () =>
          kms.send(new ScheduleKeyDeletionCommand({ KeyId: id, PendingWindowInDays: 7 })),
        );
        break;
      case 'AWS::S3::Bucket':
        await remove(resource, async () => {
          const { Contents = [] } = await s3.send(new ListObjectsV2Command({ Bucket: id }));
          if (Contents.length > 0) {
            await s3.send(
              new DeleteObjectsCommand({
                Bucket: id,
                Delete: { Objects: Contents.map(({ Key }) => ({ Key })) },
              }),
            );
          }
          await s3.send(new DeleteBucketCommand({ Bucket: id }));
        });
        break;
      case 'AWS::Logs::LogGroup':
        await remove(resource, () => logs.send(new DeleteLogGroupCommand({ logGroupName: id })));
        break;
    }
  }
  // The pool last: its domain and clients first, and its protection off.
  if (pool !== undefined) {
    await remove(pool, async () => {
      await cognito.send(
        new UpdateUserPoolCommand({
          UserPoolId: pool.PhysicalResourceId,
          DeletionProtection: 'INACTIVE',
        }),
      );
      await cognito.send(new DeleteUserPoolCommand({ UserPoolId: pool.PhysicalResourceId }));
    });
  }
  for (const made of [dynamo, cognito, sqs, kms, s3, logs]) made.destroy();
  console.info(`prod's retained resources, removed:\n  ${removed.join('\n  ')}`);
  // The rest it retains are the account's own (API Gateway's logging role and setting) and the
  // pool's resource servers and client, which go with the pool.
  const kept = retained
    .map((resource) => resource.ResourceType as string)
    .filter(
      (type) =>
        ![
          'AWS::DynamoDB::Table',
          'AWS::Cognito::UserPoolDomain',
          'AWS::Cognito::UserPool',
          'AWS::SQS::Queue',
          'AWS::KMS::Key',
          'AWS::S3::Bucket',
          'AWS::Logs::LogGroup',
        ].includes(type),
    );
  expect([...new Set(kept)].sort()).toEqual([
    'AWS::ApiGateway::Account',
    'AWS::Cognito::UserPoolClient',
    'AWS::Cognito::UserPoolResourceServer',
    'AWS::IAM::Role',
  ]);
  expect(removed.length).toBe(retained.length - kept.length);
}, 600_000);
