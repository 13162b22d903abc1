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
   * `dynamodb:PutItem` on this table's ARN. A create is one conditional put that returns the
   * old item when the condition fails, so the function needs no read action of its own.
   */
  bindCreatePlant(createPlantFunction: LambdaFunction): void {
    createPlantFunction.addEnvironment('TABLE_NAME', this.table.tableName);
    createPlantFunction.addToRolePolicy(
      new PolicyStatement({ actions: ['dynamodb:PutItem'], resources: [this.table.tableArn] }),
    );
  }
}
