/**
 * The stage's metrics made from log lines (metric filters: no code, no cold-start cost): business
 * counts, cold starts and endpoint deliveries, each read in the logging modules' own words.
 */
import { Duration } from 'aws-cdk-lib';
import { type Alarm, type AlarmProps, ComparisonOperator, Unit } from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import {
  FilterPattern,
  type IFilterPattern,
  type LogGroup,
  MetricFilter,
} from 'aws-cdk-lib/aws-logs';
import type { Topic } from 'aws-cdk-lib/aws-sns';
import type { MonitoringFacade } from 'cdk-monitoring-constructs';
import type { Construct } from 'constructs';
import { errorCodes } from '../functions/shared/errors/error-codes.ts';
import { requestLog } from '../functions/shared/http/api-responses.ts';
import { functionDisplayName, routeFunctionOf } from '../functions/shared/http/routes.ts';
import { itemsNotPlantsLog } from '../functions/shared/plants/stored-plant.ts';
import { logFields } from '../functions/shared/platform/logger.ts';
import { fanoutLog } from '../functions/shared/webhooks/queue-deliveries.ts';
import { webhookLog } from '../functions/shared/webhooks/send-webhook.ts';
import { endpointLog } from '../functions/webhook-endpoints/endpoint-targets.ts';
import { type FunctionSettings, functionSettings } from './function-settings.ts';
import type { WebhookEndpointStores } from './webhook-endpoint-stores.ts';

/** The functions watched, each with what alarming on it means. */
export interface MonitoredFunction {
  readonly name: string;
  readonly function: IFunction;
  readonly logGroup: LogGroup;
  /** `authorizer` throws on every bad token by design: only its error-level lines count. */
  readonly role: 'api' | 'authorizer' | 'stream' | 'queue' | 'scheduled';
}

export interface MetricsProps {
  readonly stageName: string;
  readonly functions: readonly MonitoredFunction[];
  readonly endpointStores: WebhookEndpointStores;
  /** The Init Duration p99 (ms) above which a function a client waits on pages. */
  readonly initDurationAlarmMilliseconds: number;
}

/** An alarm's settings, beside its name: description, metric and threshold; the rest defaulted. */
export type AlarmSettings = Pick<AlarmProps, 'alarmDescription' | 'metric' | 'threshold'> &
  Partial<AlarmProps>;

/** The monitoring construct the metrics belong to: their scope, topic, dashboard and alarms. */
export interface MetricsScope extends Construct {
  readonly topic: Topic;
  readonly facade: MonitoringFacade;
  addAlarm(name: string, props: AlarmSettings, id?: string): Alarm;
}

/** `PlantStore/<stage>`: metric filters cannot set a constant dimension, so the stage is here. */
export function stageMetricNamespace(stageName: string): string {
  return `PlantStore/${stageName}`;
}

/** Plants created (as the fan-out queued them), conflicts, webhook outcomes, items not plants. */
export function addBusinessMetrics(monitoring: MetricsScope, props: MetricsProps): void {
  const counters: [string, string, IFilterPattern, string][] = [
    ...['webhook-fanout', 'replay-stream-failures'].map(
      (name): [string, string, IFilterPattern, string] => [
        'PlantsCreated',
        name,
        message(fanoutLog.queued),
        `$.${fanoutLog.newPlantsField}`,
      ],
    ),
    [
      'PlantConflicts',
      // Only a create can conflict with a stored plant.
      functionDisplayName(routeFunctionOf('POST', '/plants')),
      FilterPattern.numberValue(
        `$.${requestLog.errorCodeField}`,
        '=',
        errorCodes.plantConflict.error,
      ),
      '1',
    ],
    ['WebhooksDelivered', 'deliver-webhook', message(webhookLog.delivered), '1'],
    ['WebhookRetries', 'deliver-webhook', message(webhookLog.retrying), '1'],
    ['WebhooksDeadLettered', 'deliver-webhook', message(webhookLog.deadLettered), '1'],
    ...Object.entries(functionSettings as Record<string, FunctionSettings>)
      .filter(([, settings]) => settings.skipsItemsNotPlants === true)
      .map(([name]) => functionDisplayName(name))
      .map((name): [string, string, IFilterPattern, string] => [
        'ItemsNotPlants',
        name,
        message(itemsNotPlantsLog.message),
        `$.${itemsNotPlantsLog.countField}`,
      ]),
  ];
  for (const [metricName, functionName, filterPattern, metricValue] of counters) {
    new MetricFilter(monitoring, `${metricName}-${functionName}`, {
      logGroup: logGroupOf(props, functionName),
      filterPattern,
      metricNamespace: stageMetricNamespace(props.stageName),
      metricName,
      metricValue,
    });
  }
}

/**
 * Every function's cold starts (`platform.report` lines) on the dashboard; a p99 alarm for each a
 * client waits on: a quarter hour holds enough for a p99, and two such of three are a regression.
 */
export function addInitDurations(monitoring: MetricsScope, props: MetricsProps): void {
  const metrics = props.functions.map(({ name, logGroup, role }) => {
    const filter = new MetricFilter(monitoring, `InitDuration-${name}`, {
      logGroup,
      filterPattern: FilterPattern.all(
        FilterPattern.stringValue(platformReport.typeField, '=', platformReport.type),
        FilterPattern.numberValue(platformReport.initDurationField, '>', 0),
      ),
      metricNamespace: `${stageMetricNamespace(props.stageName)}/InitDuration`,
      metricName: name,
      metricValue: platformReport.initDurationField,
      unit: Unit.MILLISECONDS,
    });
    const metric = filter.metric({ statistic: 'p99', period: Duration.minutes(15) });
    if (role === 'api' || role === 'authorizer') {
      monitoring.addAlarm(
        `${name}-Init-Duration-P99`,
        {
          alarmDescription: `${name}'s cold starts take longer than they should: a bundle that grew, or init waiting on the network.`,
          metric,
          threshold: props.initDurationAlarmMilliseconds,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 3,
          datapointsToAlarm: 2,
        },
        `InitDurationAlarm-${name}`,
      );
    }
    return metric.with({ label: name });
  });
  monitoring.facade.monitorCustom({
    humanReadableName: 'Cold starts',
    alarmFriendlyName: 'ColdStarts',
    metricGroups: [
      {
        title: 'Init Duration p99 per function (ms), from platform.report',
        metrics,
        horizontalAnnotations: [
          { value: props.initDurationAlarmMilliseconds, label: 'alarm (API functions)' },
        ],
      },
    ],
  });
}

/**
 * The runtime's report of an invocation in the JSON log format, `initDurationMs` on a cold start
 * only (Lambda developer guide, "Configuring JSON and plain text log formats").
 */
export const platformReport = {
  type: 'platform.report',
  typeField: '$.type',
  initDurationField: '$.record.metrics.initDurationMs',
} as const;

/** The log group of a monitored function, by its display name. */
export function logGroupOf(props: MetricsProps, name: string): LogGroup {
  const entry = props.functions.find((candidate) => candidate.name === name);
  if (entry === undefined) throw new Error(`No monitored function is named ${name}.`);
  return entry.logGroup;
}

export function message(text: string): IFilterPattern {
  return FilterPattern.stringValue(logFields.message, '=', text);
}

/** What a delivery to an endpoint came to, as the delivery logs it (`webhookLog.outcomeField`). */
export const endpointOutcomes = ['delivered', 'retrying', 'dead-lettered', 'not-sent'] as const;

/**
 * The self-service endpoints: deliveries by outcome, endpoints disabled after 5 failing days
 * (their owners may not know), the fan-out's duration and the endpoint stores' throttling.
 */
export function monitorWebhookEndpoints(monitoring: MetricsScope, props: MetricsProps): void {
  const deliver = logGroupOf(props, 'deliver-webhook');
  const namespace = stageMetricNamespace(props.stageName);
  const deliveries = new MetricFilter(monitoring, 'EndpointDeliveries', {
    logGroup: deliver,
    filterPattern: FilterPattern.all(
      FilterPattern.stringValue(`$.${webhookLog.subscriberField}`, '=', 'endpoint:*'),
      FilterPattern.exists(`$.${webhookLog.outcomeField}`),
    ),
    metricNamespace: namespace,
    metricName: 'EndpointDeliveries',
    metricValue: '1',
    dimensions: { Outcome: `$.${webhookLog.outcomeField}` },
  });
  const disabled = new MetricFilter(monitoring, 'EndpointsDisabled', {
    logGroup: deliver,
    filterPattern: message(endpointLog.disabled),
    metricNamespace: namespace,
    metricName: 'EndpointsDisabled',
    metricValue: '1',
  });
  monitoring.addAlarm('Webhook-Endpoints-Disabled', {
    alarmDescription:
      'A webhook endpoint was disabled: every attempt at it failed for 5 days (its owner may not know).',
    metric: disabled.metric({ statistic: 'Sum', period: Duration.minutes(5) }),
    threshold: 1,
  });
  const fanout = props.functions.find((entry) => entry.name === 'webhook-fanout');
  if (fanout !== undefined) {
    monitoring.addAlarm(
      'webhook-fanout-Duration-P99',
      {
        alarmDescription:
          'The fan-out takes 10 s or more a batch: the endpoint list or the webhook log is slowing every event.',
        metric: fanout.function.metricDuration({ statistic: 'p99', period: Duration.minutes(5) }),
        threshold: 10_000,
        evaluationPeriods: 3,
      },
      'FanoutDurationAlarm',
    );
  }
  for (const [table, name] of [
    [props.endpointStores.logTable, 'WebhookLog'],
    [props.endpointStores.endpointsTable, 'WebhookEndpointsTable'],
  ] as const) {
    monitoring.facade.monitorDynamoTable({
      table,
      humanReadableName: name === 'WebhookLog' ? 'Webhook log' : 'Webhook endpoints table',
      alarmFriendlyName: name,
      addReadThrottledEventsCountAlarm: { Warning: { maxThrottledEventsThreshold: 0 } },
      addWriteThrottledEventsCountAlarm: { Warning: { maxThrottledEventsThreshold: 0 } },
    });
  }
  monitoring.facade.monitorCustom({
    humanReadableName: 'Webhook endpoints',
    alarmFriendlyName: 'WebhookEndpoints',
    metricGroups: [
      {
        title: 'Deliveries to endpoints, by outcome',
        metrics: endpointOutcomes.map((outcome) =>
          deliveries.metric({
            statistic: 'Sum',
            period: Duration.minutes(5),
            dimensionsMap: { Outcome: outcome },
            label: outcome,
          }),
        ),
      },
      {
        title: 'Endpoints disabled for failing',
        metrics: [disabled.metric({ statistic: 'Sum', period: Duration.minutes(5) })],
      },
    ],
  });
}
