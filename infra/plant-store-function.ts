import path from 'node:path';
import { Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import {
  Architecture,
  LoggingFormat,
  Runtime,
  SystemLogLevel,
  Tracing,
} from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { aliasEsbuildArgs, bundleSettings } from './bundling.ts';
import type { FunctionSettings } from './function-settings.ts';

/** The repository root: entries, `package-lock.json` and the bundler's working directory. */
export const repositoryRoot = path.resolve(import.meta.dirname, '..');

export interface PlantStoreFunctionProps {
  readonly settings: FunctionSettings;
  readonly description: string;
  readonly environment?: Record<string, string>;
  readonly logRetention: RetentionDays;
  /** What happens to the function's log group when the stack is deleted. */
  readonly logRemovalPolicy: RemovalPolicy;
  /**
   * Why the function needs no dead-letter queue of its own (Lambda's DLQ serves asynchronous
   * invocations only). @default invoked synchronously by API Gateway
   */
  readonly noDeadLetterQueueReason?: string;
}

/**
 * A Plant Store Lambda function with the project's defaults: Node.js 24 on arm64 (cheaper per
 * millisecond, as fast for this work), an ESM bundle built by local esbuild (no Docker), X-Ray
 * tracing, and its own log group with a retention period. Its role may write to that log group
 * and to X-Ray, nothing else; whatever else it needs is granted by the construct it uses.
 */
export class PlantStoreFunction extends NodejsFunction {
  /** The function's log group (also its role's only logging permission). */
  readonly logGroupOfFunction: LogGroup;

  constructor(scope: Construct, id: string, props: PlantStoreFunctionProps) {
    // The log group and role are created beside the function (a constructor cannot add children
    // before `super`), so the role needs no managed policy with logs:* on every log group.
    const logGroup = new LogGroup(scope, `${id}LogGroup`, {
      retention: props.logRetention,
      removalPolicy: props.logRemovalPolicy,
    });
    const role = new Role(scope, `${id}Role`, {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Runs the Plant Store ${id} function.`,
    });
    logGroup.grantWrite(role);

    super(scope, id, {
      description: props.description,
      entry: path.join(repositoryRoot, props.settings.entry),
      handler: 'handler',
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: props.settings.memorySizeMb,
      timeout: Duration.seconds(props.settings.timeoutSeconds),
      tracing: Tracing.ACTIVE,
      logGroup,
      // JSON for the runtime's own lines too (init failures, uncaught errors, timeouts), so
      // every line of the log group is one a JSON metric filter can read. The functions' own
      // lines are JSON already and pass through unchanged.
      loggingFormat: LoggingFormat.JSON,
      // INFO keeps each invocation's platform.report, whose initDurationMs is the InitDuration
      // metric (the default today, written down so that it stays).
      systemLogLevelV2: SystemLogLevel.INFO,
      role,
      environment: props.environment,
      projectRoot: repositoryRoot,
      depsLockFilePath: path.join(repositoryRoot, 'package-lock.json'),
      bundling: {
        format: OutputFormat.ESM,
        minify: bundleSettings.minify,
        sourceMap: bundleSettings.sourcemap,
        target: bundleSettings.target,
        mainFields: [...bundleSettings.mainFields],
        externalModules: [...bundleSettings.external],
        banner: bundleSettings.banner.js,
        esbuildArgs: aliasEsbuildArgs,
      },
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
