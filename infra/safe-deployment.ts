import { Duration, Validations } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  type IAlarm,
  type IAlarmAction,
  MathExpression,
  Metric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { LambdaDeploymentConfig, LambdaDeploymentGroup } from 'aws-cdk-lib/aws-codedeploy';
import { Alias, type Function as LambdaFunction, type Version } from 'aws-cdk-lib/aws-lambda';
import {
  FilterPattern,
  type IFilterPattern,
  type ILogGroup,
  MetricFilter,
} from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { authorizerLog } from '../functions/authorizer/create-handler.ts';
import { logFields } from '../functions/shared/platform/logger.ts';

/** The namespace of the canaries' log-based metrics: one per stage, like the business metrics. */
export function deploymentMetricNamespace(stageName: string): string {
  return `PlantStore/${stageName}/Deployments`;
}

/** The dimension, read from each log line's `functionVersion`, that counts one version alone. */
const versionDimension = 'FunctionVersion';

export interface GradualDeploymentProps {
  readonly function: LambdaFunction;
  readonly stageName: string;
  /** The function's log group, where the log-based rollback signals are counted. */
  readonly logGroup: ILogGroup;
}

/**
 * A function published as a version behind the alias `live`, which is what API Gateway calls.
 * Each deploy of a new version shifts traffic gradually with CodeDeploy: 10 % for 5 minutes,
 * then all of it, and rolls back by itself when a rollback alarm fires meanwhile (the new
 * version failing) or the deployment fails or is stopped.
 *
 * The rollback alarms count the new version only. During a canary the alias's metrics and the
 * shared log group hold both versions, so a fault of the old version (or of the issuer, which
 * no release can fix) would roll back a healthy release. Lambda's metrics carry the version that
 * ran (`ExecutedVersion`, when invoked through an alias), and every log line names its version
 * (`functionVersion`), which the log-based metrics keep as a dimension.
 */
export class GradualDeployment extends Construct {
  readonly alias: Alias;
  /** The version this deploy publishes: what its canary's alarms count. */
  readonly version: Version;
  deploymentGroup: LambdaDeploymentGroup | undefined;
  private readonly props: GradualDeploymentProps;

  constructor(scope: Construct, id: string, props: GradualDeploymentProps) {
    super(scope, id);
    this.props = props;
    this.version = props.function.currentVersion;
    this.alias = new Alias(this, 'Live', { aliasName: 'live', version: this.version });
  }

  /**
   * The alarms a canary of an API function rolls back on, each on one minute: the new version's
   * Lambda errors (crashes, timeouts and failed starts), and its 5xx answers, which the handlers
   * answer themselves (so Lambda does not count them) and log at error level.
   */
  createRollbackAlarms(action: IAlarmAction): IAlarm[] {
    const serverErrors = this.versionLogMetric(
      'ServerErrors',
      FilterPattern.stringValue(logFields.level, '=', 'error'),
    );
    return [
      this.rollbackAlarm('NewVersionErrors', 'crashing or timing out', this.newVersionErrors(), 1),
      this.rollbackAlarm('NewVersionServerErrors', 'answering 5xx', serverErrors, 1),
    ].map((alarm) => {
      alarm.addAlarmAction(action);
      return alarm;
    });
  }

  /**
   * The alarm a canary of the authorizer rolls back on: its crashes. It answers every invalid
   * token by throwing `Unauthorized` (how a TOKEN authorizer says 401), which Lambda counts as an
   * error, and logs one line marked `unauthorized` for each; so the new version's crashes are its
   * Lambda errors less those lines. An issuer outage is not the release's fault (it is logged,
   * alarmed on by `Authorizer-Failures`, and answered 401 by any version) and rolls nothing back.
   * Two of three minutes: a log line may reach its metric a little after Lambda's error count.
   */
  createAuthorizerRollbackAlarms(action: IAlarmAction): IAlarm[] {
    const refusals = this.versionLogMetric(
      'Refusals',
      FilterPattern.booleanValue(`$.${authorizerLog.unauthorizedField}`, true),
    );
    const crashes = new MathExpression({
      expression: 'FILL(errors, 0) - FILL(refusals, 0)',
      usingMetrics: { errors: this.newVersionErrors(), refusals },
      period: Duration.minutes(1),
      label: 'Crashes of the new version',
    });
    const alarm = this.rollbackAlarm('NewVersionCrashes', 'crashing or timing out', crashes, 2);
    alarm.addAlarmAction(action);
    return [alarm];
  }

  /** Creates the deployment group that shifts the alias and rolls back on `alarms`. */
  rollBackOn(alarms: readonly IAlarm[]): void {
    this.deploymentGroup = new LambdaDeploymentGroup(this, 'Deployment', {
      alias: this.alias,
      deploymentConfig: LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES,
      alarms: [...alarms],
      autoRollback: { failedDeployment: true, stoppedDeployment: true, deploymentInAlarm: true },
    });
    const role = this.deploymentGroup.node.tryFindChild('ServiceRole');
    if (role !== undefined) {
      Validations.of(role).acknowledge({
        id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
        reason:
          'The AWS-maintained policy made for CodeDeploy shifting Lambda aliases: it may update ' +
          'only aliases and invoke only functions named for hooks; only CodeDeploy assumes the role.',
      });
    }
  }

  /** Lambda's errors of the new version behind the alias, a minute at a time. */
  private newVersionErrors(): Metric {
    const functionName = this.props.function.functionName;
    return new Metric({
      namespace: 'AWS/Lambda',
      metricName: 'Errors',
      dimensionsMap: {
        FunctionName: functionName,
        Resource: `${functionName}:${this.alias.aliasName}`,
        ExecutedVersion: this.version.version,
      },
      statistic: 'Sum',
      period: Duration.minutes(1),
    });
  }

  /** Counts the log lines matching `pattern` per version; the metric of the new version. */
  private versionLogMetric(name: string, filterPattern: IFilterPattern): Metric {
    const metricName = `${this.node.scope?.node.id}${name}`;
    const namespace = deploymentMetricNamespace(this.props.stageName);
    new MetricFilter(this, name, {
      logGroup: this.props.logGroup,
      filterPattern,
      metricNamespace: namespace,
      metricName,
      metricValue: '1',
      dimensions: { [versionDimension]: logFields.functionVersion },
    });
    return new Metric({
      namespace,
      metricName,
      dimensionsMap: { [versionDimension]: this.version.version },
      statistic: 'Sum',
      period: Duration.minutes(1),
    });
  }

  private rollbackAlarm(
    id: string,
    what: string,
    metric: Metric | MathExpression,
    datapointsToAlarm: number,
  ): Alarm {
    return new Alarm(this, id, {
      alarmDescription: `The new version of ${this.node.scope?.node.id} is ${what}: a deploy in progress rolls back.`,
      metric,
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: datapointsToAlarm === 1 ? 1 : 3,
      datapointsToAlarm,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }
}
