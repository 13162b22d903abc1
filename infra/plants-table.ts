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
import { type KeyAttribute, plantsTableSchema, type TableSchema } from './table-schemas.ts';

export interface PlantsTableProps {
  /** Keep the table (and refuse its deletion) when the stack is deleted: production data. */
  readonly productionLike: boolean;
}

/** The plants (`plantsTableSchema`): on demand, encrypted, point-in-time recovery on. */
export class PlantsTable extends Construct {
  readonly table: Table;

  constructor(scope: Construct, id: string, props: PlantsTableProps) {
    super(scope, id);
    this.table = tableOf(this, 'Table', plantsTableSchema, {
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: props.productionLike,
      stream: plantsTableSchema.stream as StreamViewType,
      removalPolicy: props.productionLike ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
  }

  /** A function's `TABLE_NAME`, exactly `actions`, and `DYNAMODB_ENDPOINT` empty (`sam local`). */
  bindFunction(tableFunction: LambdaFunction, actions: readonly string[]): void {
    tableFunction.addEnvironment('TABLE_NAME', this.table.tableName);
    tableFunction.addEnvironment('DYNAMODB_ENDPOINT', '');
    tableFunction.addToRolePolicy(tableStatement(actions, [this.table.tableArn]));
  }
}

/** A table of the schema: on-demand, encrypted with the account's DynamoDB key. */
export function tableOf(
  scope: Construct,
  id: string,
  schema: TableSchema,
  more: Partial<ConstructorParameters<typeof Table>[2]>,
): Table {
  const key = ({ name, type }: KeyAttribute) => ({ name, type: type as AttributeType });
  return new Table(scope, id, {
    partitionKey: key(schema.partitionKey),
    sortKey: schema.sortKey && key(schema.sortKey),
    billingMode: BillingMode.PAY_PER_REQUEST,
    encryption: TableEncryption.AWS_MANAGED,
    timeToLiveAttribute: schema.timeToLiveAttribute,
    ...more,
  });
}

/** `actions` on `resources`; a function that does not read may not have a write return items. */
export function tableStatement(actions: readonly string[], resources: string[]): PolicyStatement {
  const reads = actions.some((action) =>
    /^dynamodb:(GetItem|BatchGetItem|Query|Scan)$/.test(action),
  );
  return new PolicyStatement({
    actions: [...actions],
    resources,
    ...(reads ? {} : { conditions: { StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' } } }),
  });
}
