import { Duration, Validations } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  type IAlarm,
  type IAlarmAction,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { LambdaDeploymentConfig, LambdaDeploymentGroup } from 'aws-cdk-lib/aws-codedeploy';
import { Alias, type Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { FilterPattern, type ILogGroup, MetricFilter } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

/**
 * A function published as a version behind the alias `live`, which is what API Gateway calls.
 * Each deploy of a new version shifts traffic gradually with CodeDeploy: 10 % for 5 minutes,
 * then all of it, and rolls back by itself when a rollback alarm fires meanwhile (the new
 * version failing) or the deployment fails or is stopped.
 */
export class GradualDeployment extends Construct {
  readonly alias: Alias;
  deploymentGroup: LambdaDeploymentGroup | undefined;

  constructor(scope: Construct, id: string, props: { readonly function: LambdaFunction }) {
    super(scope, id);
    this.alias = new Alias(this, 'Live', {
      aliasName: 'live',
      version: props.function.currentVersion,
    });
  }

  /**
   * The alarms a canary of an API function rolls back on, each on one minute: the alias's own
   * Lambda errors (crashes, timeouts and failed starts of whatever version serves it), and its
   * 5xx answers, which the handlers answer themselves (so Lambda does not count them) and log at
   * error level: a version that answers 500 to everything is rolled back too. Not for the
   * authorizer, which reports every invalid token as a Lambda error by design.
   */
  createRollbackAlarms(logGroup: ILogGroup, action: IAlarmAction): IAlarm[] {
    const serverErrors = new MetricFilter(this, 'ServerErrors', {
      logGroup,
      filterPattern: FilterPattern.stringValue('$.level', '=', 'error'),
      metricNamespace: 'PlantStore/Deployments',
      metricName: `${this.node.scope?.node.id}ServerErrors`,
      metricValue: '1',
    });
    const alarms = [
      ['NewVersionErrors', 'crashing or timing out', this.alias.metricErrors()],
      ['NewVersionServerErrors', 'answering 5xx', serverErrors.metric()],
    ] as const;
    return alarms.map(([id, what, metric]) => {
      const alarm = new Alarm(this, id, {
        alarmDescription: `${this.node.scope?.node.id} is ${what}: a deploy in progress rolls back.`,
        metric: metric.with({ period: Duration.minutes(1), statistic: 'Sum' }),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      alarm.addAlarmAction(action);
      return alarm;
    });
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
}
