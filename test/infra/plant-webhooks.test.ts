/**
 * PlantWebhooks with subscribers the two stages do not have: their secrets, queues, event source
 * mappings and policies, built in a bare stack, and the subscriber settings it refuses.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AttributeType, StreamViewType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { PlantWebhooks } from '../../infra/plant-webhooks.ts';
import {
  defaultWebhookDeliveries,
  type WebhookDeliveriesConfig,
  type WebhookSubscriberConfig,
} from '../../infra/stages.ts';
import { WebhookEndpointStores } from '../../infra/webhook-endpoint-stores.ts';

describe('PlantWebhooks with subscribers', () => {
  function synthesizeWebhooks(
    productionLike: boolean,
    deliveries: WebhookDeliveriesConfig = defaultWebhookDeliveries,
  ) {
    const stack = new Stack();
    const table = new Table(stack, 'Table', {
      partitionKey: { name: 'id', type: AttributeType.NUMBER },
      stream: StreamViewType.NEW_IMAGE,
    });
    const webhooks = new PlantWebhooks(stack, 'Webhooks', {
      table,
      endpointStores: new WebhookEndpointStores(stack, 'WebhookEndpoints', { productionLike }),
      stageName: 'prod',
      subscribers: [
        { name: 'audit', url: 'https://audit.example.com/plants' },
        {
          name: 'search',
          url: 'https://search.example.com/hooks',
          format: 'event',
          events: ['plant.deleted'],
        },
      ],
      productionLike,
      deliveries,
      logRetention: RetentionDays.ONE_WEEK,
      logRemovalPolicy: RemovalPolicy.DESTROY,
    });
    return { template: Template.fromStack(stack), webhooks };
  }
  let synthesized: ReturnType<typeof synthesizeWebhooks>;
  beforeAll(() => {
    synthesized = synthesizeWebhooks(true);
  }, 60_000);

  it('feeds the fan-out every record of the stream (endpoints may hear of any kind), bisecting failures and keeping what fails', () => {
    synthesized.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^Table'), 'StreamArn'] },
      StartingPosition: 'TRIM_HORIZON',
      BisectBatchOnFunctionError: true,
      // Ten batches of a shard at once: each plant's records still in order.
      ParallelizationFactor: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      FilterCriteria: Match.absent(),
      DestinationConfig: {
        OnFailure: {
          Destination: { 'Fn::GetAtt': [Match.stringLikeRegexp('^WebhooksStreamFailures'), 'Arn'] },
        },
      },
    });
  });

  it('delivers first attempts and retries from two queues with per-message failures, retention for the whole schedule, and a dead-letter queue', () => {
    const { template } = synthesized;
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^WebhooksDeliveries'), 'Arn'] },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: 10,
      // However slow the endpoints, first attempts leave the routes their concurrency.
      ScalingConfig: { MaximumConcurrency: 600 },
    });
    // Retries take at most a few functions at once: a dead subscriber's retries, however many,
    // leave the rest of the account's concurrency to first attempts.
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^WebhooksRetries'), 'Arn'] },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: 10,
      ScalingConfig: { MaximumConcurrency: 20 },
    });
    expect(
      Object.keys(
        template.findResources('AWS::SQS::Queue', {
          Properties: {
            MessageRetentionPeriod: 4 * 24 * 3600,
            VisibilityTimeout: 180,
            RedrivePolicy: Match.objectLike({ maxReceiveCount: 5 }),
          },
        }),
      ),
    ).toHaveLength(2);
    template.hasResourceProperties('AWS::SQS::Queue', {
      MessageRetentionPeriod: 4 * 24 * 3600,
      VisibilityTimeout: 180,
      SqsManagedSseEnabled: true,
      RedrivePolicy: {
        deadLetterTargetArn: {
          'Fn::GetAtt': [Match.stringLikeRegexp('^WebhooksDeadLetters'), 'Arn'],
        },
        // Each message is one attempt, normally received once: 5 receives is a message whose
        // handling keeps failing (Lambda advises at least 5 for SQS event sources).
        maxReceiveCount: 5,
      },
    });
    // The dead letters: kept 14 days, encrypted, retained in prod.
    const kept = template.findResources('AWS::SQS::Queue', {
      Properties: { MessageRetentionPeriod: 14 * 24 * 3600, SqsManagedSseEnabled: true },
      DeletionPolicy: 'Retain',
    });
    expect(Object.keys(kept)).toHaveLength(1);
    // Only https: each queue refuses requests without TLS.
    template.resourceCountIs('AWS::SQS::QueuePolicy', 3);
    // Failed stream batches: kept whole, 30 days (and 30 more once replayed), retained in prod;
    // a record set aside (outside Lambda's `aws/lambda/`) until someone acts.
    template.hasResource('AWS::S3::Bucket', {
      Properties: {
        VersioningConfiguration: { Status: 'Enabled' },
        LifecycleConfiguration: {
          Rules: [
            Match.objectLike({ Prefix: 'aws/lambda/', ExpirationInDays: 30 }),
            Match.objectLike({ NoncurrentVersionExpiration: { NoncurrentDays: 30 } }),
          ],
        },
        PublicAccessBlockConfiguration: Match.objectLike({ BlockPublicAcls: true }),
      },
      DeletionPolicy: 'Retain',
    });
  });

  it('shares first attempts among the queues a stage asks for: a mapping each, its share of the concurrency, and every sender allowed on each', () => {
    const { template } = synthesizeWebhooks(false, { concurrency: 1_500, queues: 3 });
    const queues = Object.keys(
      template.findResources('AWS::SQS::Queue', {
        Properties: { RedrivePolicy: Match.anyValue(), VisibilityTimeout: 180 },
      }),
    ).filter((id) => id.startsWith('WebhooksDeliveries'));
    expect(queues).toHaveLength(3);
    for (const id of queues) {
      template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        EventSourceArn: { 'Fn::GetAtt': [id, 'Arn'] },
        ScalingConfig: { MaximumConcurrency: 500 },
      });
    }
    // The fan-out and the replay: every queue's URL, a space between, and each queue allowed.
    const urls = { 'Fn::Join': [' ', queues.map((id) => ({ Ref: id }))] };
    for (const id of ['WebhookFanout', 'ReplayStreamFailures']) {
      template.hasResourceProperties('AWS::Lambda::Function', {
        Description: Match.anyValue(),
        Environment: { Variables: Match.objectLike({ DELIVERY_QUEUE_URLS: urls }) },
        Role: { 'Fn::GetAtt': [Match.stringLikeRegexp(`^${id}`), 'Arn'] },
      });
    }
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyName: Match.stringLikeRegexp('^WebhookFanout'),
      PolicyDocument: {
        Statement: Match.arrayWith([
          {
            Action: 'sqs:SendMessage',
            Effect: 'Allow',
            Resource: queues.map((id) => ({ 'Fn::GetAtt': [id, 'Arn'] })),
          },
        ]),
      },
    });
    // More than one mapping's 1,000 on a queue is refused before anything is deployed.
    expect(() => synthesizeWebhooks(false, { concurrency: 2_400, queues: 2 })).toThrow(
      "webhookDeliveries: 2400 functions on 2 queues; each queue's mapping takes an even, whole share of 2 to 1000 (add queues).",
    );
    // Shared evenly or refused: 1,000 on 3 queues would be 999 in all, not what the stage says.
    expect(() => synthesizeWebhooks(false, { concurrency: 1_000, queues: 3 })).toThrow(
      '1000 functions on 3 queues',
    );
  });

  it('makes a secret per subscriber, generated by Secrets Manager (never in the template), retained in prod', () => {
    const { template } = synthesized;
    for (const name of ['audit', 'search']) {
      template.hasResource('AWS::SecretsManager::Secret', {
        Properties: {
          Name: `plant-store/prod/webhooks/${name}`,
          Description: Match.stringLikeRegexp('whsec_'),
          GenerateSecretString: {
            PasswordLength: 48,
            ExcludePunctuation: true,
            IncludeSpace: false,
          },
        },
        DeletionPolicy: 'Retain',
      });
    }
    const deliver = Object.values(
      template.findResources('AWS::Lambda::Function', {
        Properties: { Description: Match.stringLikeRegexp('POSTs webhooks') },
      }),
    )[0];
    const subscribers = JSON.stringify(deliver?.Properties.Environment.Variables.SUBSCRIBERS);
    expect(subscribers).toContain('https://audit.example.com/plants');
    expect(subscribers).toMatch(/Ref.*WebhooksSecretaudit/);
    expect(JSON.stringify(template.toJSON())).not.toMatch(/whsec_[A-Za-z0-9+/]{20,}/);
  });

  it('lets the delivery read only its subscribers\u2019 secrets and send only to the retry and dead-letter queues', () => {
    const policies = synthesized.template.findResources('AWS::IAM::Policy', {
      Properties: { Roles: [{ Ref: Match.stringLikeRegexp('^DeliverWebhookRole') }] },
    });
    const statements = Object.values(policies).flatMap(
      (policy) => policy.Properties.PolicyDocument.Statement,
    );
    const secretResources = statements
      .filter((statement) => [statement.Action].flat().includes('secretsmanager:GetSecretValue'))
      .map((statement) => statement.Resource);
    expect(secretResources).toEqual([
      { Ref: expect.stringMatching(/^WebhooksSecretaudit/) },
      { Ref: expect.stringMatching(/^WebhooksSecretsearch/) },
    ]);
    const sendResources = statements
      .filter((statement) => [statement.Action].flat().includes('sqs:SendMessage'))
      .flatMap((statement) => statement.Resource);
    expect(sendResources).toEqual([
      { 'Fn::GetAtt': [expect.stringMatching(/^WebhooksRetries/), 'Arn'] },
      { 'Fn::GetAtt': [expect.stringMatching(/^WebhooksDeadLetters/), 'Arn'] },
    ]);
  });

  it('lets the fan-out read the table’s streams only, ListStreams included, and nothing on * but X-Ray', () => {
    const statements = Object.values(
      synthesized.template.findResources('AWS::IAM::Policy', {
        Properties: { Roles: [{ Ref: Match.stringLikeRegexp('^WebhookFanoutRole') }] },
      }),
    ).flatMap((policy) => policy.Properties.PolicyDocument.Statement);
    const streamActions = /^dynamodb:(DescribeStream|GetRecords|GetShardIterator|ListStreams)$/;
    const streamStatements = statements.filter((statement) =>
      [statement.Action].flat().some((action: string) => streamActions.test(action)),
    );
    expect(streamStatements).toEqual([
      {
        Action: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'],
        Effect: 'Allow',
        Resource: { 'Fn::GetAtt': [expect.stringMatching(/^Table/), 'StreamArn'] },
      },
      {
        Action: 'dynamodb:ListStreams',
        Effect: 'Allow',
        Resource: {
          'Fn::Join': [
            '',
            [{ 'Fn::GetAtt': [expect.stringMatching(/^Table/), 'Arn'] }, '/stream/*'],
          ],
        },
      },
    ]);
    const onEverything = statements.filter((statement) => statement.Resource === '*');
    expect(onEverything.flatMap((statement) => [statement.Action].flat()).sort()).toEqual([
      'xray:PutTelemetryRecords',
      'xray:PutTraceSegments',
    ]);
  });

  it('lets Lambda keep a failed stream batch with exactly PutObject and ListBucket, and the replay read, tag, set aside and delete it', () => {
    const { template } = synthesized;
    const actionsOf = (rolePrefix: string) =>
      Object.values(
        template.findResources('AWS::IAM::Policy', {
          Properties: { Roles: [{ Ref: Match.stringLikeRegexp(`^${rolePrefix}`) }] },
        }),
      )
        .flatMap((policy) => policy.Properties.PolicyDocument.Statement)
        .flatMap((statement) => [statement.Action].flat())
        .filter((action: string) => action.startsWith('s3:'))
        .sort();
    expect(actionsOf('WebhookFanoutRole')).toEqual(['s3:ListBucket', 's3:PutObject']);
    expect(actionsOf('ReplayStreamFailuresRole')).toEqual([
      's3:DeleteObject',
      's3:GetObject',
      's3:GetObjectTagging',
      's3:ListBucket',
      's3:PutObject',
      's3:PutObjectTagging',
    ]);
  });

  it('tells the fan-out and the replay each subscriber’s types and format', () => {
    const subscriptions = [
      { name: 'audit', events: ['plant.created'], format: 'plant' },
      { name: 'search', events: ['plant.deleted'], format: 'event' },
    ];
    for (const id of [/^WebhookFanout/, /^ReplayStreamFailures/]) {
      const [fn] = Object.entries(
        synthesized.template.findResources('AWS::Lambda::Function'),
      ).filter(([logicalId]) => id.test(logicalId));
      expect(JSON.parse(fn?.[1].Properties.Environment.Variables.SUBSCRIPTIONS)).toEqual(
        subscriptions,
      );
    }
  });

  it('refuses a plain-http receiver, a repeated name, and types its format cannot carry', () => {
    const build = (subscribers: WebhookSubscriberConfig[]) => () => {
      const stack = new Stack();
      const table = new Table(stack, 'Table', {
        partitionKey: { name: 'id', type: AttributeType.NUMBER },
        stream: StreamViewType.NEW_IMAGE,
      });
      new PlantWebhooks(stack, 'Webhooks', {
        table,
        endpointStores: new WebhookEndpointStores(stack, 'WebhookEndpoints', {
          productionLike: false,
        }),
        stageName: 'dev',
        subscribers,
        productionLike: false,
        deliveries: defaultWebhookDeliveries,
        logRetention: RetentionDays.ONE_WEEK,
        logRemovalPolicy: RemovalPolicy.DESTROY,
      });
    };
    expect(build([{ name: 'audit', url: 'http://audit.example.com/' }])).toThrow('https URL');
    for (const url of [
      'https://user:pass@audit.example.com/',
      'https://audit.example.com/hook?token=secret',
    ]) {
      expect(build([{ name: 'audit', url }])).toThrow('no user, password or query string');
    }
    expect(
      build([
        { name: 'audit', url: 'https://a.example.com/' },
        { name: 'audit', url: 'https://b.example.com/' },
      ]),
    ).toThrow('unique');
    expect(
      build([{ name: 'audit', url: 'https://a.example.com/', events: ['plant.updated'] }]),
    ).toThrow('the plant format carries plant.created only');
    expect(
      build([
        {
          name: 'audit',
          url: 'https://a.example.com/',
          format: 'event',
          events: ['plant.moved' as 'plant.created'],
        },
      ]),
    ).toThrow('events must be among plant.created, plant.updated, plant.deleted');
  });
});
