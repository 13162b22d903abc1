import { Duration } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import { SlackChannelConfiguration } from 'aws-cdk-lib/aws-chatbot';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import {
  FilterPattern,
  type IFilterPattern,
  type LogGroup,
  MetricFilter,
} from 'aws-cdk-lib/aws-logs';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import {
  DefaultDashboardFactory,
  MonitoringFacade,
  SnsAlarmActionStrategy,
} from 'cdk-monitoring-constructs';
import { Construct } from 'constructs';
import type { PlantWebhooks } from './plant-webhooks.ts';
import type { AlarmNotificationsConfig } from './stages.ts';

/** The functions watched, each with what alarming on it means. */
export interface MonitoredFunction {
  readonly name: string;
  readonly function: IFunction;
  readonly logGroup: LogGroup;
  /**
   * `api`: behind API Gateway, its crashes are 500s. `authorizer`: throws on every bad token by
   * design, so only its own failures (logged at error level) count. `stream`: reads the stream.
   * `queue`: reads the delivery queue.
   */
  readonly role: 'api' | 'authorizer' | 'stream' | 'queue';
}

export interface PlantStoreMonitoringProps {
  readonly stageName: string;
  readonly api: RestApi;
  readonly table: Table;
  readonly functions: readonly MonitoredFunction[];
  readonly webhooks: PlantWebhooks;
  readonly notifications: AlarmNotificationsConfig;
}

/** Metrics made from the functions' own log lines: no code, so no cold-start cost. */
export const businessMetricNamespace = 'PlantStore';

/**
 * Alarms worth waking for, one SNS topic they notify, and a dashboard, per stage, built with
 * cdk-monitoring-constructs (cdklabs): each alarm below says why its threshold is where it is.
 * Every alarm needs its condition for 3 of 3 five-minute periods unless it says otherwise, so a
 * single blip pages nobody while a real outage pages within 15 minutes.
 */
export class PlantStoreMonitoring extends Construct {
  readonly topic: Topic;
  readonly facade: MonitoringFacade;
  /** The authorizer's failures (not invalid tokens), when an authorizer is monitored. */
  readonly authorizerFailuresAlarm: Alarm | undefined;

  constructor(scope: Construct, id: string, props: PlantStoreMonitoringProps) {
    super(scope, id);
    this.topic = new Topic(this, 'Alarms', {
      displayName: `Plant Store ${props.stageName} alarms`,
      enforceSSL: true,
    });
    for (const email of props.notifications.emails ?? []) {
      this.topic.addSubscription(new EmailSubscription(email));
    }
    const slack = props.notifications.slack;
    if (slack !== undefined) {
      new SlackChannelConfiguration(this, 'Slack', {
        slackChannelConfigurationName: `plant-store-${props.stageName}-alarms`,
        slackWorkspaceId: slack.workspaceId,
        slackChannelId: slack.channelId,
        notificationTopics: [this.topic],
      });
    }
    const sustained = { datapointsToAlarm: 3, evaluationPeriods: 3 };
    this.facade = new MonitoringFacade(this, 'Facade', {
      alarmFactoryDefaults: {
        alarmNamePrefix: `PlantStore-${props.stageName}`,
        actionsEnabled: true,
        action: new SnsAlarmActionStrategy({ onAlarmTopic: this.topic }),
        ...sustained,
      },
      dashboardFactory: new DefaultDashboardFactory(this, 'Dashboard', {
        dashboardNamePrefix: `PlantStore-${props.stageName}`,
        createDashboard: true,
        createSummaryDashboard: false,
        createAlarmDashboard: false,
      }),
    });

    this.facade.monitorApiGateway({
      api: props.api,
      apiStage: props.stageName,
      humanReadableName: 'REST API',
      alarmFriendlyName: 'Api',
      // 1 % of requests answered 5xx for 15 minutes: the functions answer client mistakes with
      // 4xx, so a 5xx is ours (a crash, the store down, a timeout), and one in a hundred
      // sustained is an outage for some clients, not noise.
      add5XXFaultRateAlarm: { Warning: { maxErrorRate: 0.01 } },
      // A create or read takes tens of milliseconds; the store call gives up at 3 s. p99 above
      // 2 s for 15 minutes means the store or the authorizer's issuer is struggling.
      addLatencyP99Alarm: { Warning: { maxLatency: Duration.seconds(2) } },
    });

    for (const { name, function: fn, role } of props.functions) {
      this.facade.monitorLambdaFunction({
        lambdaFunction: fn,
        humanReadableName: name,
        alarmFriendlyName: name,
        ...(role === 'stream' ? { isIterator: true } : {}),
        // The handlers answer every failure they expect; Lambda counts only crashes, timeouts
        // and failed starts as errors, so five in five minutes is a bug or an outage. The
        // authorizer reports each invalid token as an error by design: its failures are
        // counted from its log instead (below).
        ...(role === 'authorizer'
          ? {}
          : {
              addFaultCountAlarm: {
                Warning: { maxErrorCount: 5, datapointsToAlarm: 1, evaluationPeriods: 1 },
              },
            }),
        // Any throttle means the account's concurrency is spent: requests are refused.
        addThrottlesCountAlarm: {
          Warning: { maxErrorCount: 0, datapointsToAlarm: 1, evaluationPeriods: 1 },
        },
        // p99 at 80 % of the timeout: a little slower and requests start to time out.
        addLatencyP99Alarm: { Warning: { maxLatencyPercentageOfTimeout: 80 } },
        // New plants wait more than 5 minutes on the stream: the fan-out is failing.
        ...(role === 'stream'
          ? { addMaxIteratorAgeAlarm: { Warning: { maxAgeInMillis: 5 * 60 * 1000 } } }
          : {}),
      });
    }

    // The authorizer's own failures (its issuer's keys unreachable, a fault of ours): it logs
    // them at error level and fails closed, so every client gets 401 meanwhile. Five in five
    // minutes is an issuer outage, not one unlucky fetch.
    const authorizer = props.functions.find((entry) => entry.role === 'authorizer');
    this.authorizerFailuresAlarm = undefined;
    if (authorizer !== undefined) {
      const failures = new MetricFilter(this, 'AuthorizerFailures', {
        logGroup: authorizer.logGroup,
        filterPattern: FilterPattern.stringValue('$.level', '=', 'error'),
        metricNamespace: this.metricNamespace(props),
        metricName: 'AuthorizerFailures',
        metricValue: '1',
      });
      this.authorizerFailuresAlarm = new Alarm(this, 'AuthorizerFailuresAlarm', {
        alarmName: `PlantStore-${props.stageName}-Authorizer-Failures`,
        alarmDescription: 'The authorizer could not verify tokens (JWKS unreachable or a fault).',
        metric: failures.metric({ statistic: 'Sum', period: Duration.minutes(5) }),
        threshold: 5,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      this.authorizerFailuresAlarm.addAlarmAction(new SnsAction(this.topic));
    }
    this.addBusinessMetrics(props);

    this.facade.monitorDynamoTable({
      table: props.table,
      humanReadableName: 'Plants table',
      alarmFriendlyName: 'PlantsTable',
      // On-demand tables throttle only past their partition or account limits: any throttled
      // request for 15 minutes is clients getting 503s.
      addReadThrottledEventsCountAlarm: { Warning: { maxThrottledEventsThreshold: 0 } },
      addWriteThrottledEventsCountAlarm: { Warning: { maxThrottledEventsThreshold: 0 } },
      // DynamoDB's own 500s: the SDK retries them, so sustained ones reach clients as 503s.
      addSystemErrorCountAlarm: { Warning: { maxErrorCount: 0 } },
    });

    const { webhooks } = props;
    this.facade.monitorSqsQueueWithDlq({
      queue: webhooks.deliveryQueue,
      deadLetterQueue: webhooks.deadLetterQueue,
      humanReadableName: 'Webhook deliveries',
      alarmFriendlyName: 'WebhookDeliveries',
      // A subscriber has waited an hour for an event: after the 5 s, 5 min and 30 min retries
      // failed, someone should tell its team before the 2 h one.
      addQueueMaxMessageAgeAlarm: {
        Warning: { maxAgeInSeconds: 3600, datapointsToAlarm: 1, evaluationPeriods: 1 },
      },
      // Any dead letter is an event a subscriber never got: look, then redrive.
      addDeadLetterQueueMaxSizeAlarm: {
        Warning: { maxMessageCount: 0, datapointsToAlarm: 1, evaluationPeriods: 1 },
      },
    });
    this.facade.monitorSqsQueue({
      queue: webhooks.streamFailureQueue,
      humanReadableName: 'Webhook stream failures',
      alarmFriendlyName: 'WebhookStreamFailures',
      // Stream records the fan-out gave up on: their events were never queued.
      addQueueMaxSizeAlarm: {
        Warning: { maxMessageCount: 0, datapointsToAlarm: 1, evaluationPeriods: 1 },
      },
    });
  }

  /** `PlantStore/<stage>`: metric filters cannot set a constant dimension. */
  private metricNamespace(props: PlantStoreMonitoringProps): string {
    return `${businessMetricNamespace}/${props.stageName}`;
  }

  /**
   * Plants created (new plants the fan-out queued), conflicts and webhook outcomes, counted
   * from the functions' log lines: no code in the API functions, so nothing added to a cold start.
   */
  private addBusinessMetrics(props: PlantStoreMonitoringProps): void {
    const logOf = (name: string) => props.functions.find((entry) => entry.name === name)?.logGroup;
    const counters: [string, LogGroup | undefined, IFilterPattern, string][] = [
      [
        'PlantsCreated',
        logOf('webhook-fanout'),
        FilterPattern.exists('$.newPlants'),
        '$.newPlants',
      ],
      [
        'PlantConflicts',
        logOf('create-plant'),
        FilterPattern.numberValue('$.errorCode', '=', 40009),
        '1',
      ],
      ['WebhooksDelivered', logOf('deliver-webhook'), message('webhook delivered'), '1'],
      ['WebhookRetries', logOf('deliver-webhook'), message('webhook failed, retrying'), '1'],
      ['WebhooksDeadLettered', logOf('deliver-webhook'), message('webhook dead-lettered'), '1'],
    ];
    for (const [metricName, logGroup, filterPattern, metricValue] of counters) {
      if (logGroup === undefined) continue;
      new MetricFilter(this, metricName, {
        logGroup,
        filterPattern,
        metricNamespace: this.metricNamespace(props),
        metricName,
        metricValue,
      });
    }
  }
}

function message(text: string): IFilterPattern {
  return FilterPattern.stringValue('$.message', '=', text);
}
