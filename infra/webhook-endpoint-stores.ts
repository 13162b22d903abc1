import { Fn, RemovalPolicy, Validations } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { AnyPrincipal, Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { EndpointAccess } from './function-settings.ts';
import { allowSending } from './plant-store-function.ts';
import { tableOf, tableStatement } from './plants-table.ts';
import { webhookEndpointsTableSchema, webhookLogTableSchema } from './table-schemas.ts';

export interface WebhookEndpointStoresProps {
  /** Keep the endpoints (and refuse their table's deletion) when the stack is deleted. */
  readonly productionLike: boolean;
}

/**
 * Where self-service webhook endpoints live: their table, the webhook log (`table-schemas.ts`)
 * and the key that seals their secrets (docs/decisions/endpoint-secrets.md).
 */
export class WebhookEndpointStores extends Construct {
  readonly endpointsTable: Table;
  readonly logTable: Table;
  readonly secretsKey: Key;

  constructor(scope: Construct, id: string, props: WebhookEndpointStoresProps) {
    super(scope, id);
    const retained = props.productionLike ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    this.endpointsTable = tableOf(this, 'Endpoints', webhookEndpointsTableSchema, {
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: props.productionLike,
      removalPolicy: retained,
    });
    this.logTable = tableOf(this, 'Log', webhookLogTableSchema, {
      // Seven days of events and attempts that expire by themselves: nothing to recover.
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: false },
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const reason =
      'The webhook log holds 7 days of events and attempts, each expiring by TTL; the plants ' +
      'table it is made from has point-in-time recovery.';
    Validations.of(this.logTable).acknowledge(
      { id: 'AwsSolutions::AwsSolutions-DDB3', reason },
      { id: 'cdk-validator-cfnguard::dynamodb_table_pitr_enabled_check', reason },
    );
    this.secretsKey = new Key(this, 'SecretsKey', {
      description: 'Plant Store: seals the webhook endpoints\u2019 signing secrets.',
      enableKeyRotation: true,
      removalPolicy: retained,
    });
    // Grants for AWS services only (Control Tower's CT.KMS.PR.3): the functions use their roles.
    this.secretsKey.addToResourcePolicy(
      new PolicyStatement({
        effect: Effect.DENY,
        principals: [new AnyPrincipal()],
        actions: ['kms:CreateGrant'],
        resources: ['*'],
        conditions: {
          BoolIfExists: {
            'kms:GrantIsForAWSResource': 'false',
            'aws:PrincipalIsAWSService': 'false',
          },
        },
      }),
    );
  }

  /** Lets a function use the stores exactly as its settings say (the key: endpoint secrets only). */
  bind(fn: LambdaFunction, access: EndpointAccess, deliveryQueues: readonly IQueue[]): void {
    fn.addEnvironment('ENDPOINTS_TABLE_NAME', this.endpointsTable.tableName);
    fn.addEnvironment('WEBHOOK_LOG_TABLE_NAME', this.logTable.tableName);
    fn.addEnvironment('DYNAMODB_ENDPOINT', '');
    for (const [actions, table] of [
      [access.tableActions, this.endpointsTable],
      [access.logActions, this.logTable],
    ] as const) {
      if (actions?.length) fn.addToRolePolicy(tableStatement(actions, [table.tableArn]));
    }
    if (access.keyActions?.length) {
      fn.addEnvironment('SECRETS_KEY_ID', this.secretsKey.keyArn);
      fn.addEnvironment('KMS_ENDPOINT', '');
      // The stage's data key, and the secrets KMS sealed itself before it (each bound to its endpoint).
      fn.addToRolePolicy(
        new PolicyStatement({
          actions: [...access.keyActions],
          resources: [this.secretsKey.keyArn],
          conditions: { StringEquals: { 'kms:EncryptionContext:purpose': 'endpoint-secrets' } },
        }),
      );
      fn.addToRolePolicy(
        new PolicyStatement({
          actions: ['kms:Decrypt'],
          resources: [this.secretsKey.keyArn],
          conditions: { StringLike: { 'kms:EncryptionContext:endpointId': 'ep_*' } },
        }),
      );
    }
    if (access.sendsDeliveries) {
      // The queues' URLs, a space between: `sqsDeliveryQueue` puts each endpoint on one.
      const urls = deliveryQueues.map((queue) => queue.queueUrl);
      fn.addEnvironment('DELIVERY_QUEUE_URLS', Fn.join(' ', urls));
      allowSending(fn, ...deliveryQueues);
    }
  }
}
