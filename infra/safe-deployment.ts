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

/** The canaries' log-based metrics' namespace, per stage. */
export function deploymentMetricNamespace(stageName: string): string {
  return `PlantStore/${stageName}/Deployments`;
}

/** Counts one version alone, from each log line's `functionVersion`. */
const versionDimension = 'FunctionVersion';

export interface GradualDeploymentProps {
  readonly function: LambdaFunction;
  readonly stageName: string;
  /** The function's log group, where the log-based rollback signals are counted. */
  readonly logGroup: ILogGroup;
}

/**
 * A function behind the alias `live`, each new version shifted by CodeDeploy (10 % for 5 minutes)
 * and rolled back on alarms that count the new version alone (`ExecutedVersion`, each log line's
 * `functionVersion`): a fault of the old version rolls nothing back.
 */
export class GradualDeployment extends Construct {
  readonly alias: Alias;
  /** The version this deploy publishes: what its canary's alarms count. */
  readonly version: Version;
  private readonly props: GradualDeploymentProps;

  constructor(scope: Construct, id: string, props: GradualDeploymentProps) {
    super(scope, id);
    this.props = props;
    this.version = props.function.currentVersion;
    this.alias = new Alias(this, 'Live', { aliasName: 'live', version: this.version });
  }

  /** An API function's canary alarms: its crashes, and its 5xx (logged at error level). */
  createRollbackAlarms(action: IAlarmAction): IAlarm[] {
    const serverErrors = this.versionLogMetric(
      'ServerErrors',
      FilterPattern.stringValue(logFields.level, '=', 'error'),
    );
    const errors = this.newVersionErrors();
    return [
      this.rollbackAlarm('NewVersionErrors', 'crashing or timing out', errors, 1, action),
      this.rollbackAlarm('NewVersionServerErrors', 'answering 5xx', serverErrors, 1, action),
    ];
  }

  /**
   * The authorizer's canary alarm: its Lambda errors less its `unauthorized` lines (it throws on
   * every invalid token). An issuer outage is no release's fault and rolls nothing back. Two of
   * three minutes: a log line may reach its metric after Lambda's error count.
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
    return [this.rollbackAlarm('NewVersionCrashes', 'crashing or timing out', crashes, 2, action)];
  }

  /** Creates the deployment group that shifts the alias and rolls back on `alarms`. */
  rollBackOn(alarms: readonly IAlarm[]): void {
    const deploymentGroup = new LambdaDeploymentGroup(this, 'Deployment', {
      alias: this.alias,
      deploymentConfig: LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES,
      alarms: [...alarms],
      autoRollback: { failedDeployment: true, stoppedDeployment: true, deploymentInAlarm: true },
    });
    const role = deploymentGroup.node.tryFindChild('ServiceRole');
    if (role !== undefined) {
      Validations.of(role).acknowledge({
        id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
        reason:
          'The AWS-maintained policy for CodeDeploy shifting Lambda aliases: it may update only ' +
          'aliases and invoke only hook functions, and only CodeDeploy assumes the role.',
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
    action: IAlarmAction,
  ): Alarm {
    const alarm = new Alarm(this, id, {
      alarmDescription: `The new version of ${this.node.scope?.node.id} is ${what}: a deploy in progress rolls back.`,
      metric,
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: datapointsToAlarm === 1 ? 1 : 3,
      datapointsToAlarm,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    alarm.addAlarmAction(action);
    return alarm;
  }
}
