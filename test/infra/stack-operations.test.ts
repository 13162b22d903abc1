/**
 * The synthesized stacks' operations (alarms, dashboard, gradual deploys) and cdk-nag's checks
 * (AwsSolutions, Serverless), each finding either fixed or acknowledged with its reason. The
 * Control Tower rules (cfn-guard, a binary) are checked in `cfn-guard.integration.test.ts`.
 */
import { describe, expect, it } from '@jest/globals';
import { Match } from 'aws-cdk-lib/assertions';
import { functionDisplayName, routeFunctionNames } from '../../functions/shared/http/routes.ts';
import { functionSettings } from '../../infra/function-settings.ts';
import { defaultInitDurationAlarmMilliseconds, stages } from '../../infra/stages.ts';
import {
  expectAcknowledgedFindings,
  expectEveryAcknowledgmentUsed,
  expectNoUnacknowledgedFinding,
  synthesizedStages,
} from './synthesized-stages.ts';

const synthesizedStage = synthesizedStages();

/** The findings each stage acknowledges: a new finding, or one that goes away, fails a test. */
const acknowledgedFindings = [
  'AwsSolutions-APIG2',
  'AwsSolutions-COG4',
  'AwsSolutions-COG8',
  // The webhook log: 7 days of events and attempts that expire by themselves.
  'AwsSolutions-DDB3',
  'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
  'AwsSolutions-IAM5[Resource::*]',
  'AwsSolutions-IAM5[Resource::<PlantsTable4EFC45DE.Arn>/stream/*]',
  'AwsSolutions-IAM5[Resource::<WebhooksStreamFailures483EBBE6.Arn>/*]',
  'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:apigateway:<AWS::Region>::/usageplans/*/keys]',
  'AwsSolutions-S1',
  // The replay's schedule: a scheduled event carries nothing a dead-letter queue could keep.
  'Serverless-EventBusDLQ',
  'Serverless-LambdaAsyncFailureDestination',
  'Serverless-LambdaDLQ',
  'Serverless-LambdaEventSourceMappingDestination',
  'Serverless-SQSRedrivePolicy',
];

describe.each([stages.dev, stages.prod])('the PlantStore-$name stack', (stage) => {
  const template = () => synthesizedStage(stage.name).template;

  describe('operations', () => {
    /** Every alarm a stage has, by name without the `PlantStore-<stage>-` prefix. */
    const expectedAlarms = [
      'Api-Fault-Rate-Warning',
      'Api-Latency-P99-Warning',
      ...[
        ...routeFunctionNames.map(functionDisplayName),
        'webhook-fanout',
        'deliver-webhook',
        'replay-stream-failures',
      ].flatMap((name) => [
        `${name}-Fault-Count-Warning`,
        `${name}-Throttled-Count-Warning`,
        `${name}-Latency-P99-Warning`,
      ]),
      // The authorizer's errors count invalid tokens: its own failures come from its log.
      'authorizer-Throttled-Count-Warning',
      'authorizer-Latency-P99-Warning',
      'Authorizer-Failures',
      'Authorizer-Client-Keys-Failing',
      'webhook-fanout-Iterator-Age-Max-Warning',
      'PlantsTable-Read-Throttled-Events-Warning',
      'PlantsTable-Write-Throttled-Events-Warning',
      'PlantsTable-SystemError-Count-Warning',
      'WebhookDeliveries-DLQ-Queue-Message-Count-Max-Warning',
      'WebhookRetries-Queue-Message-Age-Max-Warning',
      'Webhooks-Late',
      'Webhooks-Replay-Failing',
      'Webhooks-Event-Refused',
      // The self-service endpoints.
      'Webhook-Endpoints-Disabled',
      'webhook-fanout-Duration-P99',
      'WebhookLog-Read-Throttled-Events-Warning',
      'WebhookLog-Write-Throttled-Events-Warning',
      'WebhookEndpointsTable-Read-Throttled-Events-Warning',
      'WebhookEndpointsTable-Write-Throttled-Events-Warning',
      // Cold starts a client waits on.
      ...[...routeFunctionNames.map(functionDisplayName), 'authorizer'].map(
        (name) => `${name}-Init-Duration-P99`,
      ),
    ];

    it('has the alarms worth waking for, each notifying the stage\u2019s one topic', () => {
      template().resourceCountIs('AWS::SNS::Topic', 1);
      const alarms = Object.values(template().findResources('AWS::CloudWatch::Alarm'));
      const named = alarms
        .map((alarm) => alarm.Properties.AlarmName as string | undefined)
        .filter((name): name is string => name !== undefined)
        .map((name) => name.replace(`PlantStore-${stage.name}-`, ''));
      expect(named.sort()).toEqual([...expectedAlarms].sort());
      for (const alarm of alarms) {
        expect(alarm.Properties.AlarmActions).toEqual([
          { Ref: expect.stringMatching(/^MonitoringAlarms/) },
        ]);
      }
    });

    it('writes every alarm on one metric as a plain metric alarm: only those that compute keep metric math', () => {
      const alarms = Object.values(template().findResources('AWS::CloudWatch::Alarm'));
      const computed = alarms
        .filter((alarm) => alarm.Properties.Metrics !== undefined)
        .map((alarm) =>
          alarm.Properties.Metrics.filter((query: { Expression?: string }) => query.Expression)
            .map((query: { Expression: string }) => query.Expression.split('+')[0])
            .join(),
        )
        .sort();
      expect(computed).toEqual([
        // The canary's crashes: errors of the new version less its refusals (prod deploys so).
        ...(stage.productionLike ? ['FILL(errors, 0) - FILL(refusals, 0)'] : []),
        // The plants table's system errors: a sum over its operations.
        'systemErrorGetItem',
      ]);
      const latency = alarms.find((alarm) =>
        String(alarm.Properties.AlarmName).endsWith('-create-plant-Latency-P99-Warning'),
      );
      expect(latency?.Properties).toMatchObject({
        MetricName: 'Duration',
        Namespace: 'AWS/Lambda',
        ExtendedStatistic: 'p99',
        Period: 300,
      });
      // FILL(throttles, 0) of one metric is missing data treated as not breaching.
      const throttles = alarms.filter((alarm) =>
        String(alarm.Properties.AlarmName).includes('-Throttled-Events-'),
      );
      expect(throttles.length).toBeGreaterThan(0);
      for (const alarm of throttles) {
        expect(alarm.Properties).toMatchObject({
          Statistic: 'Sum',
          TreatMissingData: 'notBreaching',
        });
      }
    });

    it('has one dashboard, and counts plants created, conflicts and webhook outcomes from the logs', () => {
      template().resourceCountIs('AWS::CloudWatch::Dashboard', 1);
      template().hasResourceProperties('AWS::CloudWatch::Dashboard', {
        DashboardName: `PlantStore-${stage.name}`,
      });
      const metrics = Object.values(template().findResources('AWS::Logs::MetricFilter'))
        .filter(
          (filter) =>
            filter.Properties.MetricTransformations[0].MetricNamespace ===
            `PlantStore/${stage.name}`,
        )
        .map((filter) => filter.Properties.MetricTransformations[0].MetricName);
      expect(metrics.sort()).toEqual(
        [
          'AuthorizerFailures',
          'ClientKeysNotAdded',
          'EndpointDeliveries',
          'EndpointsDisabled',
          // list-plants, get-plant, update-plant, delete-plant, webhook-fanout and the replay.
          ...Array.from({ length: 6 }, () => 'ItemsNotPlants'),
          'OldestKeptStreamBatchMinutes',
          'PlantConflicts',
          'PlantsCreated',
          'PlantsCreated',
          'WebhookRetries',
          'WebhookWaitAtNextAttempt',
          'WebhooksDeadLettered',
          'WebhooksDelivered',
          // The fan-out's and the replay's events the queue refused for good.
          'WebhookEventsRefused',
          'WebhookEventsRefused',
        ].sort(),
      );
    });

    it('measures every function\u2019s Init Duration from its platform.report records', () => {
      const filters = Object.values(template().findResources('AWS::Logs::MetricFilter')).filter(
        (filter) =>
          filter.Properties.MetricTransformations[0].MetricNamespace ===
          `PlantStore/${stage.name}/InitDuration`,
      );
      expect(
        filters.map((filter) => filter.Properties.MetricTransformations[0].MetricName).sort(),
      ).toEqual(Object.keys(functionSettings).map(functionDisplayName).sort());
      for (const filter of filters) {
        expect(filter.Properties.FilterPattern).toBe(
          '{ ($.type = "platform.report") && ($.record.metrics.initDurationMs > 0) }',
        );
        expect(filter.Properties.MetricTransformations[0]).toMatchObject({
          MetricValue: '$.record.metrics.initDurationMs',
          Unit: 'Milliseconds',
        });
        // A report without a cold start is no datapoint, not a zero that would lower the p99.
        expect(filter.Properties.MetricTransformations[0].DefaultValue).toBeUndefined();
      }
      const alarms = Object.values(template().findResources('AWS::CloudWatch::Alarm')).filter(
        (alarm) => String(alarm.Properties.AlarmName).endsWith('-Init-Duration-P99'),
      );
      for (const alarm of alarms) {
        expect(alarm.Properties).toMatchObject({
          ExtendedStatistic: 'p99',
          Period: 900,
          Threshold: stage.initDurationAlarmMilliseconds ?? defaultInitDurationAlarmMilliseconds,
          EvaluationPeriods: 3,
          DatapointsToAlarm: 2,
          TreatMissingData: 'notBreaching',
        });
      }
    });

    it(
      stage.productionLike
        ? 'publishes every API function behind a live alias the API calls, shifted by CodeDeploy canaries that roll back on alarm'
        : 'deploys every function at once, without aliases or CodeDeploy',
      () => {
        const count = stage.productionLike ? routeFunctionNames.length + 1 : 0;
        template().resourceCountIs('AWS::Lambda::Alias', count);
        template().resourceCountIs('AWS::CodeDeploy::DeploymentGroup', count);
        if (!stage.productionLike) return;
        const groups = Object.values(template().findResources('AWS::CodeDeploy::DeploymentGroup'));
        for (const group of groups) {
          expect(group.Properties).toMatchObject({
            DeploymentConfigName: 'CodeDeployDefault.LambdaCanary10Percent5Minutes',
            AutoRollbackConfiguration: {
              Enabled: true,
              Events: expect.arrayContaining(['DEPLOYMENT_FAILURE', 'DEPLOYMENT_STOP_ON_ALARM']),
            },
            AlarmConfiguration: { Enabled: true, Alarms: expect.any(Array) },
          });
        }
        for (const alias of Object.values(template().findResources('AWS::Lambda::Alias'))) {
          expect(alias.Properties.Name).toBe('live');
        }
        // Each route function rolls back on its crashes and its 5xx answers (which the handlers
        // answer themselves, so Lambda does not count them); the authorizer on its crashes.
        const alarmsPerGroup = groups
          .map((group) => group.Properties.AlarmConfiguration.Alarms.length)
          .sort();
        expect(alarmsPerGroup).toEqual([1, ...routeFunctionNames.map(() => 2)]);
        // The authorizer's canary counts its new version's crashes: Lambda's errors of that
        // version (ExecutedVersion) less its Unauthorized answers, both of that version only.
        const crashes = Object.values(template().findResources('AWS::CloudWatch::Alarm')).find(
          (alarm) => String(alarm.Properties.AlarmDescription).includes('Authorizer is crashing'),
        );
        expect(crashes?.Properties.Metrics).toEqual(
          expect.arrayContaining([
            expect.objectContaining({ Expression: 'FILL(errors, 0) - FILL(refusals, 0)' }),
            expect.objectContaining({
              Id: 'errors',
              MetricStat: expect.objectContaining({
                Metric: expect.objectContaining({
                  MetricName: 'Errors',
                  Dimensions: expect.arrayContaining([
                    { Name: 'ExecutedVersion', Value: expect.anything() },
                  ]),
                }),
              }),
            }),
            expect.objectContaining({
              Id: 'refusals',
              MetricStat: expect.objectContaining({
                Metric: expect.objectContaining({
                  Namespace: `PlantStore/${stage.name}/Deployments`,
                  Dimensions: [{ Name: 'FunctionVersion', Value: expect.anything() }],
                }),
              }),
            }),
          ]),
        );
        // Counted per version: the line's functionVersion is the metric's dimension.
        template().hasResourceProperties('AWS::Logs::MetricFilter', {
          FilterPattern: '{ $.level = "error" }',
          MetricTransformations: [
            Match.objectLike({
              MetricNamespace: `PlantStore/${stage.name}/Deployments`,
              MetricName: 'CreatePlantServerErrors',
              Dimensions: [{ Key: 'FunctionVersion', Value: '$.functionVersion' }],
            }),
          ],
        });
      },
    );
  });

  it('throttles each client in a usage plan whose keys the authorizer names and may add', () => {
    const plans = Object.values(template().findResources('AWS::ApiGateway::UsagePlan'));
    expect(plans.map((plan) => plan.Properties.UsagePlanName)).toEqual([
      `plant-store-${stage.name}-clients`,
    ]);
    const authorizers = Object.values(template().findResources('AWS::Lambda::Function')).filter(
      (fn) => fn.Properties.Environment?.Variables?.TOKEN_ISSUER !== undefined,
    );
    expect(authorizers).toHaveLength(1);
    expect(authorizers[0]?.Properties.Environment.Variables.USAGE_PLAN_NAME).toBe(
      `plant-store-${stage.name}-clients`,
    );
  });

  describe('cdk-nag', () => {
    it('leaves no unacknowledged AwsSolutions or Serverless finding', () => {
      expectNoUnacknowledgedFinding(synthesizedStage(stage.name), ['AwsSolutions', 'Serverless']);
    });

    it('acknowledges exactly the reviewed findings, each with a reason', () => {
      expectAcknowledgedFindings(synthesizedStage(stage.name), [
        ...acknowledgedFindings,
        // A stage that allows browsers: its preflights need no token.
        ...(stage.cors === undefined ? [] : ['AwsSolutions-APIG4']),
        // Gradual deploys (production-like only): CodeDeploy's own AWS-managed policy.
        ...(stage.productionLike
          ? [
              'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
            ]
          : []),
      ]);
    });

    it('acknowledges findings of cdk-nag and cfn-guard only (each checked where it runs)', () => {
      const plugins = [...synthesizedStage(stage.name).acknowledgments.keys()]
        .map((id) => id.replace(/^Annotation::/i, ''))
        .map((id) => id.slice(0, id.indexOf('::')));
      expect(new Set(plugins)).toEqual(
        new Set(['AwsSolutions', 'Serverless', 'cdk-validator-cfnguard']),
      );
    });

    it('has no cdk-nag acknowledgment that matches no finding', () => {
      expectEveryAcknowledgmentUsed(synthesizedStage(stage.name), ['AwsSolutions', 'Serverless']);
    });
  });
});
