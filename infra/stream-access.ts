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
 * What Lambda needs of a function to read a table's stream for it, on that table's streams only:
 * aws-cdk-lib's `DynamoEventSource` grants `dynamodb:ListStreams` on every resource instead, as
 * AWS's managed AWSLambdaDynamoDBExecutionRole does; AWS's own example scopes it to the table's
 * streams (Lambda developer guide, "Using Lambda with DynamoDB", execution role permissions).
 */
export function readTableStream(fn: IFunction, table: Table): void {
  fn.addToRolePolicy(
    new PolicyStatement({
      actions: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'],
      resources: [table.tableStreamArn as string],
    }),
  );
  fn.addToRolePolicy(
    new PolicyStatement({
      actions: ['dynamodb:ListStreams'],
      resources: [`${table.tableArn}/stream/*`],
    }),
  );
  const stack = Stack.of(table);
  const tableLogicalId = stack.resolve(stack.getLogicalId(table.node.defaultChild as CfnTable));
  Validations.of(fn.role ?? fn).acknowledge({
    id: `AwsSolutions::AwsSolutions-IAM5[Resource::<${tableLogicalId}.Arn>/stream/*]`,
    reason:
      "The table's streams: a stream's ARN ends in the time it was enabled, so Lambda lists " +
      'them to find the current one; no narrower resource names every stream of the table.',
  });
}

/**
 * The S3 on-failure destination of the stream's event source mapping. Lambda writes the kept
 * batch with the function's role, which needs s3:PutObject and s3:ListBucket on the bucket
 * (Lambda: "Retaining discarded records"); aws-cdk-lib's `S3OnFailureDestination` grants read and
 * write of everything instead.
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
