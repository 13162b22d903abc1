import path from 'node:path';
import { AssetHashType, DockerImage, Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
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
  /** What happens to the function's log group when the stack is deleted. */
  readonly logRemovalPolicy: RemovalPolicy;
  /**
   * Why the function needs no dead-letter queue of its own (Lambda's DLQ serves asynchronous
   * invocations only). @default invoked synchronously by API Gateway
   */
  readonly noDeadLetterQueueReason?: string;
}

/**
 * The function's code: its entry bundled by esbuild, in this process, with the options the
 * benchmark builds with (`bundling.ts`), as `index.mjs`. In process rather than the CDK's
 * `NodejsFunction`, which starts `npx esbuild` once per function (about a second each, 19
 * functions a stage); no Docker either way. The asset's hash is the bundle's, so a change that
 * does not change the bundle deploys nothing. A synth that skips bundling (`cdk synth
 * --exclusively`, the tests that read only templates) skips this too, as the CDK does.
 */
function bundledCode(entry: string): Code {
  const entryPath = path.join(repositoryRoot, entry);
  return Code.fromAsset(path.dirname(entryPath), {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      // Never pulled: the local bundling below always succeeds or throws.
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

/**
 * A Plant Store Lambda function with the project's defaults: Node.js 24 on arm64 (cheaper per
 * millisecond, as fast for this work), an ESM bundle built by esbuild (no Docker), X-Ray
 * tracing, and its own log group with a retention period. Its role may write to that log group
 * and to X-Ray, nothing else; whatever else it needs is granted by the construct it uses.
 */
export class PlantStoreFunction extends LambdaFunction {
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
      code: bundledCode(props.settings.entry),
      handler: 'index.handler',
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
