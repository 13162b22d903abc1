import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { FilterCriteria, FilterRule, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { defaultRetrySchedule } from '../functions/webhooks/send-webhook.ts';
import { functionSettings } from './function-settings.ts';
import { PlantStoreFunction } from './plant-store-function.ts';
import type { WebhookSubscriberConfig } from './stages.ts';

export interface PlantWebhooksProps {
  readonly table: Table;
  readonly stageName: string;
  readonly subscribers: readonly WebhookSubscriberConfig[];
  readonly productionLike: boolean;
  readonly logRetention: RetentionDays;
  readonly logRemovalPolicy: RemovalPolicy;
}

/** How long a message may wait on the delivery queue: the whole schedule (~27.6 h) and then some. */
const deliveryRetention = Duration.days(4);
/** Dead letters are kept as long as SQS allows, for someone to look and redrive. */
const deadLetterRetention = Duration.days(14);

/**
 * The new-plant webhooks: the table's stream → a fan-out function (INSERTs only) → one message
 * per event and subscriber on the delivery queue → the delivery function, which signs and POSTs
 * each, and on failure hides the message for the schedule's next wait (`ChangeMessageVisibility`;
 * SQS allows up to 12 h per receive, enough for the 10 h steps) → after the last attempt, the
 * dead-letter queue, kept 14 days and redriven with one `aws sqs start-message-move-task`.
 *
 * Why these parts: the stream is the one source (no second write from the API that could be
 * lost); the fan-out never calls a subscriber, so none can hold up the stream's shard; one
 * message per delivery on a standard queue has no order, so a failing subscriber's messages
 * wait on their own while every other delivery goes on (no head-of-line blocking); per-message
 * visibility gives each its own schedule without a scheduler. EventBridge Pipes could replace
 * the fan-out function but cannot send one message per subscriber; a queue's DelaySeconds stops
 * at 15 min; EventBridge Scheduler or Step Functions per delivery would cost a resource per wait.
 */
export class PlantWebhooks extends Construct {
  readonly deliveryQueue: Queue;
  readonly deadLetterQueue: Queue;
  /** Stream batches the fan-out could not queue after its retries (their metadata). */
  readonly streamFailureQueue: Queue;
  readonly fanoutFunction: PlantStoreFunction;
  readonly deliverFunction: PlantStoreFunction;
  /** Each subscriber's signing secret, by subscriber name. */
  readonly secrets: ReadonlyMap<string, Secret>;

  constructor(scope: Construct, id: string, props: PlantWebhooksProps) {
    super(scope, id);
    checkSubscribers(props.subscribers);
    const queueRemovalPolicy = props.productionLike ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    const queueDefaults = {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      removalPolicy: queueRemovalPolicy,
    };

    this.deadLetterQueue = new Queue(this, 'DeadLetters', {
      ...queueDefaults,
      retentionPeriod: deadLetterRetention,
    });
    this.streamFailureQueue = new Queue(this, 'StreamFailures', {
      ...queueDefaults,
      retentionPeriod: deadLetterRetention,
    });
    // Six times the delivery function's timeout, as AWS advises for SQS event sources.
    this.deliveryQueue = new Queue(this, 'Deliveries', {
      ...queueDefaults,
      retentionPeriod: deliveryRetention,
      visibilityTimeout: Duration.seconds(6 * functionSettings.deliverWebhook.timeoutSeconds),
      // A safety net only: the delivery function dead-letters a message itself, with its last
      // failure, after the schedule's last attempt; this catches one that keeps crashing it.
      deadLetterQueue: {
        queue: this.deadLetterQueue,
        maxReceiveCount: defaultRetrySchedule.length + 3,
      },
    });

    const secrets = new Map<string, Secret>();
    for (const subscriber of props.subscribers) {
      secrets.set(
        subscriber.name,
        new Secret(this, `Secret-${subscriber.name}`, {
          secretName: `plant-store/${props.stageName}/webhooks/${subscriber.name}`,
          description: `Signs the Plant Store's webhooks to ${subscriber.url}: whsec_ + this value.`,
          // 48 letters and digits: valid base64 of 36 random bytes, the key Standard Webhooks signs with.
          generateSecretString: {
            passwordLength: 48,
            excludePunctuation: true,
            includeSpace: false,
          },
          removalPolicy: queueRemovalPolicy,
        }),
      );
    }
    this.secrets = secrets;

    const functionDefaults = {
      logRetention: props.logRetention,
      logRemovalPolicy: props.logRemovalPolicy,
      noDeadLetterQueueReason:
        'Invoked by an event source mapping, never asynchronously: a failed stream batch goes to ' +
        'the StreamFailures queue, a failed delivery stays on its queue and ends in DeadLetters.',
    };
    this.fanoutFunction = new PlantStoreFunction(scope, 'WebhookFanout', {
      ...functionDefaults,
      settings: functionSettings.webhookFanout,
      description: 'Plant Store: queues one webhook delivery per new plant and subscriber.',
      environment: {
        DELIVERY_QUEUE_URL: this.deliveryQueue.queueUrl,
        SUBSCRIBER_NAMES: JSON.stringify(props.subscribers.map((subscriber) => subscriber.name)),
      },
    });
    this.fanoutFunction.addEventSource(
      new DynamoEventSource(props.table, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: 100,
        bisectBatchOnError: true,
        retryAttempts: 10,
        reportBatchItemFailures: true,
        filters: [FilterCriteria.filter({ eventName: FilterRule.isEqual('INSERT') })],
        onFailure: new SqsDlq(this.streamFailureQueue),
      }),
    );
    this.deliveryQueue.grantSendMessages(this.fanoutFunction);

    this.deliverFunction = new PlantStoreFunction(scope, 'DeliverWebhook', {
      ...functionDefaults,
      settings: functionSettings.deliverWebhook,
      description: 'Plant Store: signs and POSTs webhooks, retrying on schedule.',
      environment: {
        DELIVERY_QUEUE_URL: this.deliveryQueue.queueUrl,
        DEAD_LETTER_QUEUE_URL: this.deadLetterQueue.queueUrl,
        SUBSCRIBERS: JSON.stringify(
          props.subscribers.map((subscriber) => ({
            name: subscriber.name,
            url: subscriber.url,
            secretArn: secrets.get(subscriber.name)?.secretArn,
          })),
        ),
      },
    });
    this.deliverFunction.addEventSource(
      new SqsEventSource(this.deliveryQueue, { batchSize: 10, reportBatchItemFailures: true }),
    );
    this.deadLetterQueue.grantSendMessages(this.deliverFunction);
    for (const secret of secrets.values()) secret.grantRead(this.deliverFunction);

    for (const queue of [this.deadLetterQueue, this.streamFailureQueue]) {
      Validations.of(queue).acknowledge(
        {
          id: 'AwsSolutions::AwsSolutions-SQS3',
          reason: deadLetterQueueReason,
        },
        {
          id: 'Serverless::Serverless-SQSRedrivePolicy',
          reason: deadLetterQueueReason,
        },
        // Control Tower's CT.SQS.PR.1, checked by cfn-guard.
        {
          id: 'cdk-validator-cfnguard::sqs_dlq_check',
          reason: deadLetterQueueReason,
        },
      );
    }
    const deliveryMapping = this.deliverFunction.node.children.find((child) =>
      child.node.id.startsWith('SqsEventSource'),
    );
    if (deliveryMapping !== undefined) {
      Validations.of(deliveryMapping).acknowledge({
        id: 'Serverless::Serverless-LambdaEventSourceMappingDestination',
        reason:
          'SQS event source mappings take no on-failure destination: the Deliveries queue has ' +
          'its own redrive policy to DeadLetters, and the function dead-letters a message ' +
          'itself, with its last failure, after the last retry.',
      });
    }
    for (const secret of secrets.values()) {
      Validations.of(secret).acknowledge({
        id: 'AwsSolutions::AwsSolutions-SMG4',
        reason:
          'A webhook secret is shared with its subscriber, who must switch keys at the same ' +
          'time: rotate it by hand (README, Webhooks), not on a schedule.',
      });
    }
  }
}

const deadLetterQueueReason =
  'This queue is itself where failures end (kept 14 days, watched, redriven by hand): a ' +
  'dead-letter queue of its own would only move them somewhere less visible.';

/** Names safe in a secret's name, unique, and https receivers only. */
function checkSubscribers(subscribers: readonly WebhookSubscriberConfig[]): void {
  const names = new Set<string>();
  for (const { name, url } of subscribers) {
    if (!/^[a-z0-9-]{1,40}$/.test(name) || names.has(name)) {
      throw new Error(`Webhook subscriber names must be unique lower-case words, got "${name}".`);
    }
    names.add(name);
    if (!URL.canParse(url) || new URL(url).protocol !== 'https:') {
      throw new Error(`Webhook subscriber ${name} must have an https URL, got "${url}".`);
    }
    // The URL is in the template and the function's environment: no credential may hide in it
    // (the signature is what proves the sender).
    const { username, password, search } = new URL(url);
    if (username !== '' || password !== '' || search !== '') {
      throw new Error(
        `Webhook subscriber ${name}'s URL must carry no user, password or query string: the secret signs each webhook instead.`,
      );
    }
  }
}
