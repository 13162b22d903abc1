import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { type CfnFunction, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { BlockPublicAccess, Bucket, BucketEncryption, type CfnBucket } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { replayPeriodMinutes } from '../functions/replay-stream-failures/create-handler.ts';
import { functionSettings } from './function-settings.ts';
import { allowSending, PlantStoreFunction } from './plant-store-function.ts';
import type { WebhookDeliveriesConfig, WebhookSubscriberConfig } from './stages.ts';
import { keepFailuresIn, readTableStream } from './stream-access.ts';
import type { WebhookEndpointStores } from './webhook-endpoint-stores.ts';
import {
  deadLetterQueueSettings,
  deliveryBatchSize,
  deliveryMappingConcurrency,
  deliveryMaxReceiveCount,
  fanoutStreamSettings,
  retryMaximumConcurrency,
  workQueueSettings,
} from './webhook-pipeline-settings.ts';
import { checkSubscribers } from './webhook-subscribers.ts';

export interface PlantWebhooksProps {
  readonly table: Table;
  /** The self-service endpoints: the fan-out, the replay and the delivery reach them too. */
  readonly endpointStores: WebhookEndpointStores;
  readonly stageName: string;
  readonly subscribers: readonly WebhookSubscriberConfig[];
  readonly productionLike: boolean;
  readonly logRetention: RetentionDays;
  readonly logRemovalPolicy: RemovalPolicy;
  readonly traceSampleRatio?: number;
  readonly deliveries: WebhookDeliveriesConfig;
}

/** How long a kept stream failure waits in its bucket for someone to replay it. */
const streamFailureRetention = Duration.days(30);

/**
 * The plant webhooks: stream → fan-out → delivery queues → delivery (signs and POSTs) → retry
 * queue (delayed messages) → dead-letter queue, kept 14 days. A batch the fan-out cannot queue is
 * kept in a bucket for the replay (docs/webhooks.md and its decisions).
 */
export class PlantWebhooks extends Construct {
  /** First attempts, each endpoint's on one queue of them (`sqsDeliveryQueue`). */
  readonly deliveryQueues: readonly Queue[];
  /** The first of them: where dead letters are redriven to. */
  readonly deliveryQueue: Queue;
  /** Later attempts and their hops: a subscriber's failures never queue before others' events. */
  readonly retryQueue: Queue;
  readonly deadLetterQueue: Queue;
  /** Stream batches the fan-out could not queue after its retries, kept whole. */
  readonly streamFailureBucket: Bucket;
  readonly fanoutFunction: PlantStoreFunction;
  /** Queues the kept stream batches' deliveries, run by hand. */
  readonly replayFunction: PlantStoreFunction;
  readonly deliverFunction: PlantStoreFunction;
  /** Each subscriber's signing secret, by subscriber name. */
  readonly secrets: ReadonlyMap<string, Secret>;

  private readonly props: PlantWebhooksProps;
  private readonly removalPolicy: RemovalPolicy;

  constructor(scope: Construct, id: string, props: PlantWebhooksProps) {
    super(scope, id);
    this.props = props;
    this.removalPolicy = props.productionLike ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    const subscriptions = JSON.stringify(checkSubscribers(props.subscribers));
    const queues = this.createQueues();
    this.deliveryQueues = queues.deliveryQueues;
    this.deliveryQueue = queues.deliveryQueues[0] as Queue;
    this.retryQueue = queues.retryQueue;
    this.deadLetterQueue = queues.deadLetterQueue;
    this.streamFailureBucket = this.createStreamFailureBucket();
    this.secrets = this.createSecrets();
    this.fanoutFunction = this.createFanout(scope, subscriptions);
    this.replayFunction = this.createReplay(scope, subscriptions);
    this.deliverFunction = this.createDelivery(scope);
    this.acknowledgeFindings();
  }

  /** Deliveries (first attempts, `Deliveries2`… beside), Retries (later ones), DeadLetters. */
  private createQueues() {
    const queueDefaults = {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      removalPolicy: this.removalPolicy,
    };
    const deadLetterQueue = new Queue(this, 'DeadLetters', {
      ...queueDefaults,
      retentionPeriod: Duration.seconds(deadLetterQueueSettings.retentionSeconds),
    });
    // A safety net: the delivery function dead-letters a message itself, with its failure.
    const workQueue = {
      ...queueDefaults,
      retentionPeriod: Duration.seconds(workQueueSettings.retentionSeconds),
      visibilityTimeout: Duration.seconds(workQueueSettings.visibilityTimeoutSeconds),
      deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: deliveryMaxReceiveCount },
    };
    return {
      deadLetterQueue,
      deliveryQueues: Array.from(
        { length: this.props.deliveries.queues },
        (_, index) => new Queue(this, `Deliveries${index === 0 ? '' : index + 1}`, workQueue),
      ),
      retryQueue: new Queue(this, 'Retries', workQueue),
    };
  }

  /** Where Lambda keeps a stream batch the fan-out gave up on, for the replay. */
  private createStreamFailureBucket(): Bucket {
    return new Bucket(this, 'StreamFailures', {
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      // A replayed batch is deleted; versioning keeps it as long again.
      versioned: true,
      // What Lambda keeps (under `aws/lambda/`, "Retaining discarded records") expires; a record
      // the replay set aside (`set-aside/`) waits for a person however long it takes.
      lifecycleRules: [
        { prefix: 'aws/lambda/', expiration: streamFailureRetention },
        { noncurrentVersionExpiration: streamFailureRetention },
      ],
      removalPolicy: this.removalPolicy,
      autoDeleteObjects: false,
    });
  }

  /** A secret per stage subscriber, generated by Secrets Manager (never in the template). */
  private createSecrets(): Map<string, Secret> {
    const secrets = new Map<string, Secret>();
    for (const subscriber of this.props.subscribers) {
      const secret = new Secret(this, `Secret-${subscriber.name}`, {
        secretName: `plant-store/${this.props.stageName}/webhooks/${subscriber.name}`,
        description: `Signs the Plant Store's webhooks to ${subscriber.url}: whsec_ + this value.`,
        // Valid base64 of 36 random bytes, the key Standard Webhooks signs with.
        generateSecretString: { passwordLength: 48, excludePunctuation: true, includeSpace: false },
        removalPolicy: this.removalPolicy,
      });
      secrets.set(subscriber.name, secret);
    }
    return secrets;
  }

  private functionDefaults() {
    return {
      logRetention: this.props.logRetention,
      logRemovalPolicy: this.props.logRemovalPolicy,
      traceSampleRatio: this.props.traceSampleRatio,
      noDeadLetterQueueReason:
        'A failed stream batch is kept and a failed delivery dead-lettered; the replay, invoked by its schedule, is made up by its next run.',
    };
  }

  /** The fan-out, fed every record of the stream, keeping the batches that still fail. */
  private createFanout(scope: Construct, subscriptions: string): PlantStoreFunction {
    const { table, endpointStores } = this.props;
    const fanout = new PlantStoreFunction(scope, 'WebhookFanout', {
      ...this.functionDefaults(),
      settings: functionSettings.webhookFanout,
      description:
        'Plant Store: queues one webhook delivery per plant event and subscriber of its type.',
      environment: { SUBSCRIPTIONS: subscriptions },
    });
    readTableStream(fanout, table);
    fanout.addEventSourceMapping('PlantsStream', {
      eventSourceArn: table.tableStreamArn,
      startingPosition: StartingPosition.TRIM_HORIZON,
      ...fanoutStreamSettings,
      reportBatchItemFailures: true,
      onFailure: keepFailuresIn(this.streamFailureBucket),
    });
    endpointStores.bind(fanout, functionSettings.webhookFanout.endpointAccess, this.deliveryQueues);
    return fanout;
  }

  /** The replay of kept stream batches: reads and deletes them, queues as the fan-out does. */
  private createReplay(scope: Construct, subscriptions: string): PlantStoreFunction {
    const settings = functionSettings.replayStreamFailures;
    const bucket = this.streamFailureBucket;
    const replay = new PlantStoreFunction(scope, 'ReplayStreamFailures', {
      ...this.functionDefaults(),
      settings,
      description: 'Plant Store: queues the webhooks of kept stream failures (on a schedule).',
      environment: {
        STREAM_FAILURES_BUCKET: bucket.bucketName,
        // Empty: AWS's endpoint; declared so that `sam local invoke --env-vars` can set it.
        S3_ENDPOINT: '',
        SUBSCRIPTIONS: subscriptions,
      },
    });
    // Reads and deletes a batch, keeps its progress in its tags, and sets a record aside.
    replay.addToRolePolicy(
      new PolicyStatement({
        actions: [
          's3:GetObject',
          's3:DeleteObject',
          's3:GetObjectTagging',
          's3:PutObjectTagging',
          's3:PutObject',
        ],
        resources: [bucket.arnForObjects('*')],
      }),
    );
    replay.addToRolePolicy(
      new PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucket.bucketArn] }),
    );
    // Runs never overlap: one at a time, and a failed run is not retried by Lambda (its retries
    // would race the next scheduled run); the next run, 5 minutes on, makes it up.
    (replay.node.defaultChild as CfnFunction).reservedConcurrentExecutions = 1;
    replay.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: Duration.minutes(1) });
    Validations.of(replay).acknowledge({
      id: 'Serverless::Serverless-LambdaAsyncFailureDestination',
      reason:
        'A scheduled run carries nothing to keep: the next run makes up a failed one, and its alarm pages when none finishes.',
    });
    const schedule = new Rule(scope, 'ReplayStreamFailuresSchedule', {
      description: 'Plant Store: replays kept stream failures (backoff by their age).',
      schedule: Schedule.rate(Duration.minutes(replayPeriodMinutes)),
      targets: [new LambdaFunction(replay, { retryAttempts: 2 })],
    });
    Validations.of(schedule).acknowledge({
      id: 'Serverless::Serverless-EventBusDLQ',
      reason:
        'A scheduled event carries nothing: a run that fails is made up by the next, 5 minutes on.',
    });
    this.props.endpointStores.bind(replay, settings.endpointAccess, this.deliveryQueues);
    return replay;
  }

  /** The delivery, fed by every queue, each mapping's concurrency capped. */
  private createDelivery(scope: Construct): PlantStoreFunction {
    const settings = functionSettings.deliverWebhook;
    const deliver = new PlantStoreFunction(scope, 'DeliverWebhook', {
      ...this.functionDefaults(),
      settings,
      description: 'Plant Store: signs and POSTs webhooks, retrying on schedule.',
      environment: {
        RETRY_QUEUE_URL: this.retryQueue.queueUrl,
        DEAD_LETTER_QUEUE_URL: this.deadLetterQueue.queueUrl,
        SUBSCRIBERS: JSON.stringify(
          this.props.subscribers.map((subscriber) => ({
            name: subscriber.name,
            url: subscriber.url,
            secretArn: this.secrets.get(subscriber.name)?.secretArn,
          })),
        ),
        // Empty: AWS's endpoint. Declared so that `sam local invoke --env-vars` can set it.
        SECRETS_MANAGER_ENDPOINT: '',
      },
    });
    const firstAttempts = deliveryMappingConcurrency(this.props.deliveries);
    for (const [queue, maxConcurrency] of [
      ...this.deliveryQueues.map((queue) => [queue, firstAttempts] as const),
      [this.retryQueue, retryMaximumConcurrency] as const,
    ]) {
      const batches = { batchSize: deliveryBatchSize, reportBatchItemFailures: true };
      deliver.addEventSource(new SqsEventSource(queue, { ...batches, maxConcurrency }));
    }
    allowSending(deliver, this.retryQueue, this.deadLetterQueue);
    for (const secret of this.secrets.values()) secret.grantRead(deliver);
    this.props.endpointStores.bind(deliver, settings.endpointAccess, this.deliveryQueues);
    return deliver;
  }

  /** Every cdk-nag and cfn-guard finding these resources raise by design, with its reason. */
  private acknowledgeFindings(): void {
    Validations.of(this.deadLetterQueue).acknowledge(
      { id: 'Serverless::Serverless-SQSRedrivePolicy', reason: deadLetterQueueReason },
      // Control Tower's CT.SQS.PR.1, checked by cfn-guard.
      { id: 'cdk-validator-cfnguard::sqs_dlq_check', reason: deadLetterQueueReason },
    );
    const queueMappings = this.deliverFunction.node.children.filter((child) =>
      child.node.id.startsWith('SqsEventSource'),
    );
    for (const queueMapping of queueMappings) {
      Validations.of(queueMapping).acknowledge({
        id: 'Serverless::Serverless-LambdaEventSourceMappingDestination',
        reason:
          'SQS mappings take no destination: each queue redrives to DeadLetters, as the function does.',
      });
    }
    const accessLogsReason =
      'Only Lambda writes this bucket and only the replay reads it, on a schedule, which an alarm watches.';
    Validations.of(this.streamFailureBucket).acknowledge(
      { id: 'AwsSolutions::AwsSolutions-S1', reason: accessLogsReason },
      // Control Tower's CT.S3.PR.2, .4, .9 and .10, checked by cfn-guard.
      { id: 'cdk-validator-cfnguard::s3_bucket_logging_enabled_check', reason: accessLogsReason },
      {
        id: 'cdk-validator-cfnguard::s3_event_notifications_enabled_check',
        reason:
          'The replay reads the bucket every 5 minutes and an alarm says when a batch stays: a notification would repeat it.',
      },
      {
        id: 'cdk-validator-cfnguard::s3_bucket_object_lock_enabled_check',
        reason:
          'Kept batches are deleted once replayed (versioning keeps them 30 days): no object lock.',
      },
      {
        id: 'cdk-validator-cfnguard::s3_bucket_default_encryption_kms_check',
        reason:
          'S3-managed keys: the batches hold what the table holds, and Lambda writes them unaided.',
      },
    );
    const stack = Stack.of(this);
    const bucketLogicalId = stack.resolve(
      stack.getLogicalId(this.streamFailureBucket.node.defaultChild as CfnBucket),
    );
    for (const fn of [this.fanoutFunction, this.replayFunction]) {
      Validations.of(fn.role ?? fn).acknowledge({
        id: `AwsSolutions::AwsSolutions-IAM5[Resource::<${bucketLogicalId}.Arn>/*]`,
        reason:
          'Lambda names each kept batch itself (aws/lambda/<mapping>/…): no narrower resource exists.',
      });
    }
    for (const secret of this.secrets.values()) {
      Validations.of(secret).acknowledge({
        id: 'AwsSolutions::AwsSolutions-SMG4',
        reason:
          'A webhook secret is shared with its subscriber: rotated by hand together (docs/webhooks.md).',
      });
    }
  }
}

const deadLetterQueueReason =
  'This queue is itself where failures end (kept 14 days, watched, redriven by hand): a ' +
  'dead-letter queue of its own would only move them somewhere less visible.';
