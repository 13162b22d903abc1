import { RemovalPolicy } from 'aws-cdk-lib';
import {
  AttributeType,
  BillingMode,
  type ITable,
  Table,
  TableEncryption,
} from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';

export interface PlantsTableProps {
  /** Keep the table (and refuse its deletion) when the stack is deleted: production data. */
  readonly productionLike: boolean;
}

/**
 * The plants, one item per plant keyed by its `id` (a DynamoDB Number, which holds any int64
 * exactly). On-demand capacity, encrypted with the account's DynamoDB KMS key, point-in-time
 * recovery on; production-like stages retain it and enable deletion protection.
 */
export class PlantsTable extends Construct {
  readonly table: ITable;

  constructor(scope: Construct, id: string, props: PlantsTableProps) {
    super(scope, id);
    this.table = new Table(this, 'Table', {
      partitionKey: { name: 'id', type: AttributeType.NUMBER },
      billingMode: BillingMode.PAY_PER_REQUEST,
      encryption: TableEncryption.AWS_MANAGED,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: props.productionLike,
      removalPolicy: props.productionLike ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
  }

  /**
   * Lets the create-plant function use this table: its name in `TABLE_NAME` and exactly
   * `dynamodb:PutItem` and `dynamodb:GetItem` on this table's ARN. A create is one conditional
   * put; when the condition fails it returns the old item (`ReturnValuesOnConditionCheckFailure`),
   * which reads the item: `GetItem` makes sure that read is allowed, so an identical retry is
   * answered 200 and a conflict 40009 rather than an access error.
   */
  bindCreatePlant(createPlantFunction: LambdaFunction): void {
    createPlantFunction.addEnvironment('TABLE_NAME', this.table.tableName);
    createPlantFunction.addToRolePolicy(
      new PolicyStatement({
        actions: ['dynamodb:PutItem', 'dynamodb:GetItem'],
        resources: [this.table.tableArn],
      }),
    );
  }
}
