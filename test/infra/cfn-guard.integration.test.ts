/**
 * cfn-guard's Control Tower rules over the dev and prod synths, as `cdk synth` runs them: each
 * finding either fixed or acknowledged with its reason. (An integration test: the rules run in
 * the cfn-guard binary the package ships, about 13 s a template on two cores.)
 */
import { describe, expect, it } from '@jest/globals';
import { stages } from '../../infra/stages.ts';
import { expectEveryAcknowledgmentUsed, synthesizeStages } from './synthesized-stages.ts';

const synthesizedStage = synthesizeStages({ checks: ['cfn-guard'] });

/** The Control Tower rules each stage acknowledges, reasons in the stack. */
const acknowledgedControlTowerFindings = [
  'cloudwatch_log_group_encrypted_check', // CT.CLOUDWATCH.PR.3
  'dynamodb_table_pitr_enabled_check', // CT.DYNAMODB.PR.1: the webhook log
  'lambda_function_public_access_prohibited_check', // CT.LAMBDA.PR.2: Fn::Join SourceArn
  'lambda_inside_vpc_check', // CT.LAMBDA.PR.3
  'sqs_dlq_check', // CT.SQS.PR.1: the dead-letter queues themselves
  // The kept stream failures' bucket: CT.S3.PR.2, .4, .9 and .10.
  's3_bucket_logging_enabled_check',
  's3_event_notifications_enabled_check',
  's3_bucket_object_lock_enabled_check',
  's3_bucket_default_encryption_kms_check',
];

describe.each([stages.dev, stages.prod])('cfn-guard over the PlantStore-$name stack', (stage) => {
  const report = () => {
    const validationReport = synthesizedStage(stage.name).validationReport;
    if (validationReport === undefined) throw new Error('the synth was not checked');
    return validationReport;
  };

  // The report, not the synth's exit code: once anything is acknowledged, the cfn-guard
  // plugin's remaining violations no longer fail a synth.
  it('leaves no unacknowledged Control Tower finding', () => {
    expect(report().pluginReports.map((plugin) => plugin.pluginName)).toEqual([
      'cdk-validator-cfnguard',
    ]);
    for (const plugin of report().pluginReports) {
      expect(plugin.violations ?? []).toEqual([]);
      expect(plugin.conclusion).toBe('success');
    }
  });

  it('acknowledges exactly the reviewed findings, each with a reason', () => {
    const suppressed = report().pluginReports.flatMap(
      (plugin) => plugin.suppressedViolations ?? [],
    );
    const expected = [
      ...acknowledgedControlTowerFindings,
      // Only a stage that is not production-like keeps its logs less than a year.
      ...(stage.productionLike ? [] : ['cloudwatch_log_group_retention_period_check']),
    ];
    expect([...new Set(suppressed.map((finding) => finding.ruleName))].sort()).toEqual(
      expected.sort(),
    );
    for (const finding of suppressed) {
      expect(finding.reason.length).toBeGreaterThan(80);
    }
  });

  it('has no Control Tower acknowledgment that matches no finding', () => {
    expectEveryAcknowledgmentUsed(synthesizedStage(stage.name), ['cdk-validator-cfnguard']);
  });
});
