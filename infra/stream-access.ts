/**
 * A stream's consumer and its on-failure destination with the permissions Lambda needs and no
 * more: aws-cdk-lib's event sources grant wider ones (every stream, every object of the bucket).
 */
import { Stack, Validations } from 'aws-cdk-lib';
import type { CfnTable, Table } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { DlqDestinationConfig, IEventSourceDlq, IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Bucket } from 'aws-cdk-lib/aws-s3';

/**
 * Reading a table's stream, `ListStreams` on its streams only, not every resource as
 * `DynamoEventSource` grants (Lambda developer guide, "Using Lambda with DynamoDB").
 */
export function readTableStream(fn: IFunction, table: Table): void {
  fn.addToRolePolicy(
    new PolicyStatement({
      actions: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'],
      resources: [table.tableStreamArn as string],
    }),
  );
  const streams = `${table.tableArn}/stream/*`;
  fn.addToRolePolicy(
    new PolicyStatement({ actions: ['dynamodb:ListStreams'], resources: [streams] }),
  );
  const stack = Stack.of(table);
  const tableLogicalId = stack.resolve(stack.getLogicalId(table.node.defaultChild as CfnTable));
  Validations.of(fn.role ?? fn).acknowledge({
    id: `AwsSolutions::AwsSolutions-IAM5[Resource::<${tableLogicalId}.Arn>/stream/*]`,
    reason:
      "A stream's ARN ends in the time it was enabled, so Lambda lists the table's streams to find it.",
  });
}

/**
 * The stream's S3 on-failure destination: Lambda writes with the function's role, which needs
 * s3:PutObject and s3:ListBucket (Lambda: "Retaining discarded records"), not read and write.
 */
export function keepFailuresIn(bucket: Bucket): IEventSourceDlq {
  return {
    bind(_mapping, handler: IFunction): DlqDestinationConfig {
      handler.addToRolePolicy(
        new PolicyStatement({ actions: ['s3:PutObject'], resources: [bucket.arnForObjects('*')] }),
      );
      handler.addToRolePolicy(
        new PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucket.bucketArn] }),
      );
      return { destination: bucket.bucketArn };
    },
  };
}
