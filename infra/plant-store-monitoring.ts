import { Aspects, Duration } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import { SlackChannelConfiguration } from 'aws-cdk-lib/aws-chatbot';
import {
  Alarm,
  type AlarmProps,
  ComparisonOperator,
  TreatMissingData,
  Unit,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { FilterPattern, MetricFilter } from 'aws-cdk-lib/aws-logs';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import {
  DefaultDashboardFactory,
  MonitoringFacade,
  SnsAlarmActionStrategy,
} from 'cdk-monitoring-constructs';
import { Construct } from 'constructs';
import { replayLog } from '../functions/replay-stream-failures/create-handler.ts';
import { logFields } from '../functions/shared/platform/logger.ts';
import { webhookLog } from '../functions/shared/webhooks/send-webhook.ts';
import {
  addBusinessMetrics,
  addInitDurations,
  logGroupOf,
  type MetricsProps,
  type MetricsScope,
  type MonitoredFunction,
  message,
  monitorWebhookEndpoints,
  stageMetricNamespace,
} from './log-metrics.ts';
import { PlainMetricAlarms } from './plain-metric-alarms.ts';
import type { PlantWebhooks } from './plant-webhooks.ts';
import type { AlarmNotificationsConfig } from './stages.ts';

export type { MonitoredFunction };

export interface PlantStoreMonitoringProps extends MetricsProps {
  readonly api: RestApi;
  readonly table: Table;
  readonly webhooks: PlantWebhooks;
  readonly notifications: AlarmNotificationsConfig;
}

/**
 * A late webhook, in seconds: an event that will have waited this long at its next attempt
 * means its subscriber failed the 5 s, 5 min and 30 min retries (it fires when the 30 min one
 * fails, about 35 minutes after the event).
 */
export const lateWebhookSeconds = 3600;

/** How old a kept stream batch may be before its failing replays wake someone: an hour. */
export const keptBatchAlarmMinutes = 60;

/**
 * Alarms worth waking for, one SNS topic they notify, and a dashboard, per stage, built with
 * cdk-monitoring-constructs (cdklabs): each alarm below says why its threshold is where it is.
 * Every alarm needs its condition for 3 of 3 five-minute periods unless it says otherwise, so a
 * single blip pages nobody while a real outage pages within 15 minutes.
 */
export class PlantStoreMonitoring extends Construct implements MetricsScope {
  readonly topic: Topic;
  readonly facade: MonitoringFacade;
  /** The authorizer's failures (not invalid tokens), when an authorizer is monitored. */
  readonly authorizerFailuresAlarm: Alarm | undefined;
  private readonly stageName: string;

  constructor(scope: Construct, id: string, props: PlantStoreMonitoringProps) {
    super(scope, id);
    this.stageName = props.stageName;
    this.topic = this.createTopic(props);
    this.facade = this.createFacade();
    this.monitorApi(props);
    this.monitorFunctions(props);
    this.authorizerFailuresAlarm = this.monitorAuthorizer(props);
    addBusinessMetrics(this, props);
    addInitDurations(this, props);
    this.monitorTables(props);
    this.monitorWebhooks(props);
    monitorWebhookEndpoints(this, props);
    Aspects.of(this).add(new PlainMetricAlarms());
  }

  /** The stage's one topic, with the e-mail and Slack subscriptions the stage names. */
  private createTopic(props: PlantStoreMonitoringProps): Topic {
    const topic = new Topic(this, 'Alarms', {
      displayName: `Plant Store ${props.stageName} alarms`,
      enforceSSL: true,
    });
    for (const email of props.notifications.emails ?? []) {
      topic.addSubscription(new EmailSubscription(email));
    }
    const slack = props.notifications.slack;
    if (slack !== undefined) {
      new SlackChannelConfiguration(this, 'Slack', {
        slackChannelConfigurationName: `plant-store-${props.stageName}-alarms`,
        slackWorkspaceId: slack.workspaceId,
        slackChannelId: slack.channelId,
        notificationTopics: [topic],
      });
    }
    return topic;
  }

  /** The library's facade: every alarm it makes notifies the topic, one dashboard. */
  private createFacade(): MonitoringFacade {
    const sustained = { datapointsToAlarm: 3, evaluationPeriods: 3 };
    return new MonitoringFacade(this, 'Facade', {
      alarmFactoryDefaults: {
        alarmNamePrefix: `PlantStore-${this.stageName}`,
        actionsEnabled: true,
        action: new SnsAlarmActionStrategy({ onAlarmTopic: this.topic }),
        ...sustained,
      },
      dashboardFactory: new DefaultDashboardFactory(this, 'Dashboard', {
        dashboardNamePrefix: `PlantStore-${this.stageName}`,
        createDashboard: true,
        createSummaryDashboard: false,
        createAlarmDashboard: false,
      }),
    });
  }

  /** The REST API: its 5xx rate and its latency. */
  private monitorApi(props: PlantStoreMonitoringProps): void {
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
  }

  /** Each function: errors (but the authorizer's), throttles, duration, a stream's age. */
  private monitorFunctions(props: PlantStoreMonitoringProps): void {
    for (const { name, function: fn, role } of props.functions) {
      this.facade.monitorLambdaFunction({
        lambdaFunction: fn,
        humanReadableName: name,
        alarmFriendlyName: name,
        ...(role === 'stream' ? { isIterator: true } : {}),
        // The handlers answer every failure they expect; Lambda counts only crashes, timeouts
        // and failed starts as errors, so five in five minutes is a bug or an outage (the
        // library alarms above its maximum: 4 allowed, the 5th fires). The authorizer reports
        // each invalid token as an error by design: its failures are counted from its log
        // instead (below).
        ...(role === 'authorizer'
          ? {}
          : {
              addFaultCountAlarm: {
                Warning: { maxErrorCount: 4, datapointsToAlarm: 1, evaluationPeriods: 1 },
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
  }

  /**
   * The authorizer's own failures (its issuer's keys unreachable, a fault of ours): it logs
   * them at error level and fails closed, so every client gets 401 meanwhile. Five in five
   * minutes is an issuer outage, not one unlucky fetch.
   */
  private monitorAuthorizer(props: PlantStoreMonitoringProps): Alarm | undefined {
    const authorizer = props.functions.find((entry) => entry.role === 'authorizer');
    if (authorizer === undefined) return undefined;
    {
      const failures = new MetricFilter(this, 'AuthorizerFailures', {
        logGroup: authorizer.logGroup,
        filterPattern: FilterPattern.stringValue(logFields.level, '=', 'error'),
        metricNamespace: stageMetricNamespace(props.stageName),
        metricName: 'AuthorizerFailures',
        metricValue: '1',
      });
      const alarm = new Alarm(this, 'AuthorizerFailuresAlarm', {
        alarmName: `PlantStore-${props.stageName}-Authorizer-Failures`,
        alarmDescription: 'The authorizer could not verify tokens (JWKS unreachable or a fault).',
        metric: failures.metric({ statistic: 'Sum', period: Duration.minutes(5) }),
        threshold: 5,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      alarm.addAlarmAction(new SnsAction(this.topic));
      return alarm;
    }
  }

  /** The plants table: throttling and DynamoDB's own errors. */
  private monitorTables(props: PlantStoreMonitoringProps): void {
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
  }

  /** The stage subscribers' webhooks: dead letters, retries behind, late deliveries, kept batches. */
  private monitorWebhooks(props: PlantStoreMonitoringProps): void {
    const { webhooks } = props;
    this.facade.monitorSqsQueueWithDlq({
      queue: webhooks.deliveryQueue,
      deadLetterQueue: webhooks.deadLetterQueue,
      humanReadableName: 'Webhook deliveries',
      alarmFriendlyName: 'WebhookDeliveries',
      // Any dead letter is an event a subscriber never got: look, then redrive.
      addDeadLetterQueueMaxSizeAlarm: {
        Warning: { maxMessageCount: 0, datapointsToAlarm: 1, evaluationPeriods: 1 },
      },
    });
    // Retries falling behind: a retry or hop waits 15 minutes at most, so one that is 30 minutes
    // old has waited 15 minutes for a free function (the retry mapping's concurrency is capped).
    // Each message is normally received once, so SQS's age metric sees them all.
    this.facade.monitorSqsQueue({
      queue: webhooks.retryQueue,
      humanReadableName: 'Webhook retries',
      alarmFriendlyName: 'WebhookRetries',
      addQueueMaxMessageAgeAlarm: { Warning: { maxAgeInSeconds: 1800 } },
    });
    // A subscriber is down: an event will have waited an hour at its next attempt. The queue's
    // own age cannot show it: every retry is a new message (and SQS leaves messages received
    // three times or more out of ApproximateAgeOfOldestMessage).
    const late = new MetricFilter(this, 'WebhookWaitAtNextAttempt', {
      logGroup: logGroupOf(props, 'deliver-webhook'),
      filterPattern: message(webhookLog.retrying),
      metricNamespace: stageMetricNamespace(props.stageName),
      metricName: 'WebhookWaitAtNextAttempt',
      metricValue: `$.${webhookLog.waitedAtNextAttemptField}`,
      unit: Unit.SECONDS,
    });
    this.addAlarm('Webhooks-Late', {
      alarmDescription:
        'A webhook will be an hour late or more: its subscriber failed the 5 s, 5 min and 30 min retries.',
      metric: late.metric({ statistic: 'Maximum', period: Duration.minutes(5) }),
      threshold: lateWebhookSeconds,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });
    // A stream batch the fan-out gave up on is replayed on a schedule (5, 10, 20, 40 minutes…):
    // one still kept an hour later is one the replay keeps failing (its crashes alarm as any
    // function's do).
    const kept = new MetricFilter(this, 'OldestKeptStreamBatch', {
      logGroup: logGroupOf(props, 'replay-stream-failures'),
      filterPattern: message(replayLog.replayed),
      metricNamespace: stageMetricNamespace(props.stageName),
      metricName: 'OldestKeptStreamBatchMinutes',
      metricValue: `$.${replayLog.oldestKeptField}`,
      unit: Unit.COUNT,
    });
    this.addAlarm('Webhooks-Replay-Failing', {
      alarmDescription:
        'A stream batch the fan-out gave up on is still kept an hour later: its replays keep failing (docs/webhooks.md).',
      metric: kept.metric({ statistic: 'Maximum', period: Duration.minutes(5) }),
      threshold: keptBatchAlarmMinutes,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });
  }

  /** An alarm on one period, missing data as fine, notifying the stage's topic. */
  addAlarm(
    name: string,
    props: Pick<AlarmProps, 'alarmDescription' | 'metric' | 'threshold' | 'comparisonOperator'>,
  ): Alarm {
    const alarm = new Alarm(this, name.replaceAll('-', ''), {
      ...props,
      alarmName: `PlantStore-${this.stageName}-${name}`,
      evaluationPeriods: 1,
      datapointsToAlarm: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    alarm.addAlarmAction(new SnsAction(this.topic));
    return alarm;
  }
}
