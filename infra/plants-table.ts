import { RemovalPolicy } from 'aws-cdk-lib';
import {
  type AttributeType,
  BillingMode,
  type StreamViewType,
  Table,
  TableEncryption,
} from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { plantsTableSchema } from './table-schemas.ts';

export interface PlantsTableProps {
  /** Keep the table (and refuse its deletion) when the stack is deleted: production data. */
  readonly productionLike: boolean;
}

/**
 * The plants, as `plantsTableSchema` says (one item per plant keyed by its `id`, a stream of new
 * and old images: the webhooks' source). On-demand capacity, encrypted with the account's
 * DynamoDB KMS key, point-in-time recovery on; production-like stages retain it and enable
 * deletion protection.
 */
export class PlantsTable extends Construct {
  readonly table: Table;

  constructor(scope: Construct, id: string, props: PlantsTableProps) {
    super(scope, id);
    this.table = new Table(this, 'Table', {
      // The schema's values are the DynamoDB API's, which the CDK's enums spell the same.
      partitionKey: {
        name: plantsTableSchema.partitionKey.name,
        type: plantsTableSchema.partitionKey.type as AttributeType,
      },
      billingMode: BillingMode.PAY_PER_REQUEST,
      encryption: TableEncryption.AWS_MANAGED,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: props.productionLike,
      stream: plantsTableSchema.stream as StreamViewType,
      removalPolicy: props.productionLike ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
  }

  /**
   * Lets a function use this table: its name in `TABLE_NAME` (and `DYNAMODB_ENDPOINT` declared
   * empty, meaning AWS's endpoint, so that `sam local invoke --env-vars` can point it at DynamoDB
   * Local: SAM overrides only variables the template declares) and exactly `actions` on this
   * table's ARN. A function without a read action may not have a write return the old item
   * either (`dynamodb:ReturnValues` must be `NONE`), so it cannot read what it deletes.
   */
  bindFunction(tableFunction: LambdaFunction, actions: readonly string[]): void {
    tableFunction.addEnvironment('TABLE_NAME', this.table.tableName);
    tableFunction.addEnvironment('DYNAMODB_ENDPOINT', '');
    const reads = actions.some((action) => readActions.includes(action));
    tableFunction.addToRolePolicy(
      new PolicyStatement({
        actions: [...actions],
        resources: [this.table.tableArn],
        ...(reads
          ? {}
          : { conditions: { StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' } } }),
      }),
    );
  }
}

/** DynamoDB actions that read items. */
const readActions = [
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  'dynamodb:Scan',
];
