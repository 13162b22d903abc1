import path from 'node:path';
import {
  AssetHashType,
  Aws,
  DockerImage,
  Duration,
  type RemovalPolicy,
  Validations,
} from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import {
  Architecture,
  Code,
  Function as LambdaFunction,
  LoggingFormat,
  Runtime,
  SystemLogLevel,
  Tracing,
} from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { buildSync } from 'esbuild';
import { createBuildOptions } from './bundling.ts';
import type { FunctionSettings } from './function-settings.ts';

/** The repository root: entries, `package-lock.json` and the bundler's working directory. */
export const repositoryRoot = path.resolve(import.meta.dirname, '..');

export interface PlantStoreFunctionProps {
  readonly settings: FunctionSettings;
  readonly description: string;
  readonly environment?: Record<string, string>;
  readonly logRetention: RetentionDays;
  readonly logRemovalPolicy: RemovalPolicy;
  /** The share of traces whose spans it sends to X-Ray (`StageConfig`). @default 0 */
  readonly traceSampleRatio?: number;
  /** Why no dead-letter queue (Lambda's serves asynchronous calls). @default API Gateway's */
  readonly noDeadLetterQueueReason?: string;
}

/**
 * The entry bundled by esbuild in process (`bundling.ts`), not `NodejsFunction`'s `npx esbuild`
 * per function (a second each); the asset's hash is the bundle's: an unchanged one deploys nothing.
 */
function bundledCode(entry: string): Code {
  const entryPath = path.join(repositoryRoot, entry);
  return Code.fromAsset(path.dirname(entryPath), {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      image: DockerImage.fromRegistry('local-esbuild'),
      local: {
        tryBundle(outputDirectory) {
          buildSync({
            ...createBuildOptions(entryPath, path.join(outputDirectory, 'index.mjs')),
            absWorkingDir: repositoryRoot,
            logLevel: 'warning',
          });
          return true;
        },
      },
    },
  });
}

/** A Lambda function with the project's defaults; its role may write its logs, the rest by use. */
export class PlantStoreFunction extends LambdaFunction {
  readonly logGroupOfFunction: LogGroup;

  constructor(scope: Construct, id: string, props: PlantStoreFunctionProps) {
    // Beside the function (nothing may precede `super`): the role writes only its own log group.
    const logGroup = new LogGroup(scope, `${id}LogGroup`, {
      retention: props.logRetention,
      removalPolicy: props.logRemovalPolicy,
    });
    const role = new Role(scope, `${id}Role`, {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Runs the Plant Store ${id} function.`,
    });
    logGroup.grantWrite(role);
    const ratio = props.traceSampleRatio ?? 0;
    // Spans to X-Ray's OTLP endpoint, signed (`spans.ts`): `xray:PutSpans` ("OTLP Endpoint").
    const spans = {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `https://xray.${Aws.REGION}.${Aws.URL_SUFFIX}/v1/traces`,
      OTEL_TRACES_SAMPLER_ARG: String(ratio),
    };
    if (ratio > 0) {
      const actions = ['xray:PutSpans', 'xray:PutSpansForIndexing'];
      role.addToPolicy(new PolicyStatement({ actions, resources: ['*'] }));
    }

    super(scope, id, {
      description: props.description,
      code: bundledCode(props.settings.entry),
      handler: 'index.handler',
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: props.settings.memorySizeMb,
      timeout: Duration.seconds(props.settings.timeoutSeconds),
      tracing: Tracing.ACTIVE,
      logGroup,
      // JSON for the runtime's own lines too, so a metric filter reads every line; INFO keeps
      // each platform.report (the InitDuration metric).
      loggingFormat: LoggingFormat.JSON,
      systemLogLevelV2: SystemLogLevel.INFO,
      role,
      environment: { ...props.environment, ...(ratio > 0 ? spans : {}) },
    });
    this.logGroupOfFunction = logGroup;

    Validations.of(role).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM5[Resource::*]',
      reason:
        'X-Ray tracing: xray:PutTraceSegments and xray:PutTelemetryRecords support no ' +
        'resource-level permissions, so AWS requires Resource "*" for them.',
    });
    Validations.of(this).acknowledge({
      id: 'Serverless::Serverless-LambdaDLQ',
      reason:
        props.noDeadLetterQueueReason ??
        'Invoked synchronously by API Gateway only: a failure is answered to the client, and ' +
          'Lambda never retries or dead-letters synchronous invocations.',
    });
  }
}

/**
 * Lets `fn` queue messages on `queues`: `sqs:SendMessage` alone (which authorizes the batch), not
 * CDK's `grantSendMessages`, whose `GetQueueUrl` and `GetQueueAttributes` no function calls.
 */
export function allowSending(fn: LambdaFunction, ...queues: IQueue[]): void {
  const resources = queues.map((queue) => queue.queueArn);
  fn.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources }));
}
