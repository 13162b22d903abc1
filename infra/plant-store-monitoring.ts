import { Aspects, Duration } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import { SlackChannelConfiguration } from 'aws-cdk-lib/aws-chatbot';
import { Alarm, ComparisonOperator, TreatMissingData, Unit } from 'aws-cdk-lib/aws-cloudwatch';
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
import { authorizerLog } from '../functions/authorizer/create-handler.ts';
import {
  replayLog,
  replayPeriodMinutes,
} from '../functions/replay-stream-failures/create-handler.ts';
import { logFields } from '../functions/shared/platform/logger.ts';
import { fanoutLog } from '../functions/shared/webhooks/queue-deliveries.ts';
import { webhookLog } from '../functions/shared/webhooks/send-webhook.ts';
import {
  type AlarmSettings,
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

/** A late webhook: the event will have waited an hour at its next attempt (~35 min after). */
export const lateWebhookSeconds = 3600;

/** How old a kept stream batch may be before its failing replays wake someone: an hour. */
export const keptBatchAlarmMinutes = 60;

/** Scheduled replay runs in a row without a summary (crashed, timed out, not run) that page. */
export const replayRunsMissedBeforeAlarm = 3;

/** For the facade's alarms that page on the first breaching period. */
const atOnce = { datapointsToAlarm: 1, evaluationPeriods: 1 };

/**
 * Alarms worth waking for, their topic and a dashboard, per stage (cdk-monitoring-constructs).
 * An alarm needs 3 of 3 five-minute periods unless it says otherwise: a blip pages nobody.
 */
export class PlantStoreMonitoring extends Construct implements MetricsScope {
  readonly topic: Topic;
  readonly facade: MonitoringFacade;
  private readonly stageName: string;

  constructor(scope: Construct, id: string, props: PlantStoreMonitoringProps) {
    super(scope, id);
    this.stageName = props.stageName;
    this.topic = this.createTopic(props);
    this.facade = this.createFacade();
    this.monitorApi(props);
    this.monitorFunctions(props);
    this.monitorAuthorizer(props);
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
      // 5xx is ours, never a client's mistake: 1 % for 15 minutes is an outage for some.
      add5XXFaultRateAlarm: { Warning: { maxErrorRate: 0.01 } },
      // The store gives up at 3 s: p99 over 2 s is the store or the issuer struggling.
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
        // Handlers answer what they expect: five crashes or timeouts in five minutes is a bug.
        // The authorizer throws on every bad token by design: its failures are counted below.
        ...(role === 'authorizer'
          ? {}
          : { addFaultCountAlarm: { Warning: { maxErrorCount: 4, ...atOnce } } }),
        // Any throttle means the account's concurrency is spent: requests are refused.
        addThrottlesCountAlarm: { Warning: { maxErrorCount: 0, ...atOnce } },
        // p99 at 80 % of the timeout: a little slower and requests start to time out.
        addLatencyP99Alarm: { Warning: { maxLatencyPercentageOfTimeout: 80 } },
        // New plants wait more than 5 minutes on the stream: the fan-out is failing.
        ...(role === 'stream'
          ? { addMaxIteratorAgeAlarm: { Warning: { maxAgeInMillis: 5 * 60 * 1000 } } }
          : {}),
      });
    }
  }

  /** The authorizer's own failures, logged at error level: five in five minutes is an outage. */
  private monitorAuthorizer(props: PlantStoreMonitoringProps): void {
    const authorizer = props.functions.find((entry) => entry.role === 'authorizer');
    if (authorizer === undefined) return;
    const failures = new MetricFilter(this, 'AuthorizerFailures', {
      logGroup: authorizer.logGroup,
      filterPattern: FilterPattern.stringValue(logFields.level, '=', 'error'),
      metricNamespace: stageMetricNamespace(props.stageName),
      metricName: 'AuthorizerFailures',
      metricValue: '1',
    });
    const keysNotAdded = new MetricFilter(this, 'AuthorizerClientKeysNotAdded', {
      logGroup: authorizer.logGroup,
      filterPattern: message(authorizerLog.clientKeyNotAdded),
      metricNamespace: stageMetricNamespace(props.stageName),
      metricName: 'ClientKeysNotAdded',
      metricValue: '1',
    });
    this.addAlarm(
      'Authorizer-Client-Keys-Failing',
      {
        alarmDescription:
          "API Gateway's control plane refused or timed out the authorizer's client keys (its account-wide 10 calls a second, shared with CloudFormation): those clients are counted as the shared client meanwhile. Not the JWKS.",
        metric: keysNotAdded.metric({ statistic: 'Sum', period: Duration.minutes(5) }),
        threshold: 5,
        evaluationPeriods: 3,
      },
      'AuthorizerClientKeysAlarm',
    );
    this.addAlarm(
      'Authorizer-Failures',
      {
        alarmDescription: 'The authorizer could not verify tokens (JWKS unreachable or a fault).',
        metric: failures.metric({ statistic: 'Sum', period: Duration.minutes(5) }),
        threshold: 5,
      },
      'AuthorizerFailuresAlarm',
    );
  }

  /** The plants table: throttling and DynamoDB's own errors. */
  private monitorTables(props: PlantStoreMonitoringProps): void {
    this.facade.monitorDynamoTable({
      table: props.table,
      humanReadableName: 'Plants table',
      alarmFriendlyName: 'PlantsTable',
      // On demand, any throttled request for 15 minutes is clients getting 503s.
      addReadThrottledEventsCountAlarm: { Warning: { maxThrottledEventsThreshold: 0 } },
      addWriteThrottledEventsCountAlarm: { Warning: { maxThrottledEventsThreshold: 0 } },
      // DynamoDB's own 500s: the SDK retries them, so sustained ones reach clients as 503s.
      addSystemErrorCountAlarm: { Warning: { maxErrorCount: 0 } },
    });
  }

  /** The stage subscribers' webhooks: dead letters, late retries and deliveries, kept batches. */
  private monitorWebhooks(props: PlantStoreMonitoringProps): void {
    const { webhooks } = props;
    this.facade.monitorSqsQueueWithDlq({
      queue: webhooks.deliveryQueue,
      deadLetterQueue: webhooks.deadLetterQueue,
      humanReadableName: 'Webhook deliveries',
      alarmFriendlyName: 'WebhookDeliveries',
      // Any dead letter is an event a subscriber never got: look, then redrive.
      addDeadLetterQueueMaxSizeAlarm: { Warning: { maxMessageCount: 0, ...atOnce } },
    });
    for (const [index, queue] of webhooks.deliveryQueues.slice(1).entries()) {
      const name = `WebhookDeliveries${index + 2}`;
      this.facade.monitorSqsQueue({ queue, humanReadableName: name, alarmFriendlyName: name });
    }
    // A retry waits 15 minutes at most: one 30 minutes old waits for a free function.
    this.facade.monitorSqsQueue({
      queue: webhooks.retryQueue,
      humanReadableName: 'Webhook retries',
      alarmFriendlyName: 'WebhookRetries',
      addQueueMaxMessageAgeAlarm: { Warning: { maxAgeInSeconds: 1800 } },
    });
    // A subscriber is down; the queue's age cannot show it, as every retry is a new message.
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
    });
    // A kept stream batch is replayed at 5, 10, 20, 40 minutes…: kept an hour, it keeps failing.
    // Every run logs its summary; a run that crashes, times out or never starts logs none, so
    // three periods without one page as well (missing data breaches).
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
        'The replay of kept stream batches is failing: a batch is still kept an hour later, or no run has finished for 15 minutes (docs/webhooks.md).',
      metric: kept.metric({ statistic: 'Maximum', period: Duration.minutes(replayPeriodMinutes) }),
      threshold: keptBatchAlarmMinutes,
      evaluationPeriods: replayRunsMissedBeforeAlarm,
      treatMissingData: TreatMissingData.BREACHING,
    });
    // An event the queue refuses for good is set aside, so as to hold back no other: one pages.
    const [refused] = ['webhook-fanout', 'replay-stream-failures'].map(
      (functionName) =>
        new MetricFilter(this, `RefusedEvents-${functionName}`, {
          logGroup: logGroupOf(props, functionName),
          filterPattern: message(fanoutLog.refused),
          metricNamespace: stageMetricNamespace(props.stageName),
          metricName: 'WebhookEventsRefused',
          metricValue: `$.${fanoutLog.refusedField}`,
          unit: Unit.COUNT,
        }),
    );
    this.addAlarm('Webhooks-Event-Refused', {
      alarmDescription:
        'The delivery queue refused a plant event for good: it was set aside and its webhooks not sent; recover reaches it for 7 days (docs/webhooks.md).',
      metric: (refused as MetricFilter).metric({ statistic: 'Sum', period: Duration.minutes(5) }),
      threshold: 1,
    });
  }

  /** An alarm to the topic: at or over threshold all of one period, no data fine, unless told. */
  addAlarm(name: string, props: AlarmSettings, id = name.replaceAll('-', '')): Alarm {
    const alarm = new Alarm(this, id, {
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      ...props,
      datapointsToAlarm: props.datapointsToAlarm ?? props.evaluationPeriods ?? 1,
      alarmName: `PlantStore-${this.stageName}-${name}`,
      treatMissingData: props.treatMissingData ?? TreatMissingData.NOT_BREACHING,
    });
    alarm.addAlarmAction(new SnsAction(this.topic));
    return alarm;
  }
}
