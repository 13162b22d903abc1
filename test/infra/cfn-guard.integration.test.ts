/**
 * cfn-guard's Control Tower rules over the dev and prod synths, as `cdk synth` runs them: each
 * finding either fixed or acknowledged with its reason. (An integration test: the rules run in
 * the cfn-guard binary the package ships, about 13 s a template on two cores.)
 */
import { describe, it } from '@jest/globals';
import { stages } from '../../infra/stages.ts';
import {
  expectAcknowledgedFindings,
  expectEveryAcknowledgmentUsed,
  expectNoUnacknowledgedFinding,
  synthesizeStagesForCfnGuard,
} from './synthesized-stages.ts';

const synthesizedStage = synthesizeStagesForCfnGuard();

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
  it('leaves no unacknowledged Control Tower finding', () => {
    expectNoUnacknowledgedFinding(synthesizedStage(stage.name), ['cdk-validator-cfnguard']);
  });

  it('acknowledges exactly the reviewed findings, each with a reason', () => {
    expectAcknowledgedFindings(synthesizedStage(stage.name), [
      ...acknowledgedControlTowerFindings,
      // Only a stage that is not production-like keeps its logs less than a year.
      ...(stage.productionLike ? [] : ['cloudwatch_log_group_retention_period_check']),
    ]);
  });

  it('has no Control Tower acknowledgment that matches no finding', () => {
    expectEveryAcknowledgmentUsed(synthesizedStage(stage.name), ['cdk-validator-cfnguard']);
  });
});
