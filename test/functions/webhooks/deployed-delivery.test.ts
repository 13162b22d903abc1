/**
 * The deployed webhook path's two functions: the fan-out from stream records to queue messages,
 * and the delivery from queue messages to subscribers (a real receiver on 127.0.0.1 verifying
 * with the Standard Webhooks library), with SQS and Secrets Manager mocked: the calls they make
 * are the behaviour under test.
 */
import { randomBytes } from 'node:crypto';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import {
  ChangeMessageVisibilityCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { DynamoDBStreamEvent, SQSEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { createDeliverHandler } from '../../../functions/deliver-webhook/deliver-handler.ts';
import { createLogger } from '../../../functions/shared/logger.ts';
import { createFanoutHandler } from '../../../functions/webhook-fanout/fanout-handler.ts';
import { defaultRetrySchedule } from '../../../functions/webhooks/send-webhook.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.ts';

const sqs = mockClient(SQSClient);
const secretsManager = mockClient(SecretsManagerClient);
const secretText = randomBytes(36).toString('base64');
const quiet = createLogger({}, () => {});
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver(`whsec_${secretText}`);
});

afterAll(async () => {
  await receiver.stop();
});

beforeEach(() => {
  sqs.reset();
  secretsManager.reset();
  secretsManager.on(GetSecretValueCommand).resolves({ SecretString: secretText });
  sqs.resolves({});
  receiver.setMode('ok');
  receiver.deliveries.length = 0;
});

function streamEvent(
  records: { eventName: string; id: bigint; name: string }[],
): DynamoDBStreamEvent {
  return {
    Records: records.map((record, index) => ({
      eventID: `event-${index}`,
      eventName: record.eventName as 'INSERT',
      dynamodb: {
        SequenceNumber: String(100 + index),
        NewImage: marshall({ id: record.id, name: record.name }) as never,
      },
    })),
  };
}

describe('the webhook fan-out', () => {
  it('queues one message per INSERT and subscriber, the payload an exact StoredPlant', async () => {
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    const handle = createFanoutHandler({
      sqs: new SQSClient({}),
      deliveryQueueUrl: 'https://sqs.example/delivery',
      subscriberNames: ['audit', 'search'],
    });
    const result = await handle(
      streamEvent([
        { eventName: 'INSERT', id: 9_223_372_036_854_775_807n, name: 'Max' },
        { eventName: 'REMOVE', id: 1n, name: 'Gone' },
      ]),
    );
    expect(result).toEqual({ batchItemFailures: [] });
    const [call] = sqs.commandCalls(SendMessageBatchCommand);
    expect(call?.args[0].input.QueueUrl).toBe('https://sqs.example/delivery');
    expect(
      call?.args[0].input.Entries?.map((entry) => JSON.parse(entry.MessageBody ?? '')),
    ).toEqual([
      {
        webhookId: 'msg_event-0',
        payload: '{"id":9223372036854775807,"name":"Max"}',
        subscriber: 'audit',
      },
      {
        webhookId: 'msg_event-0',
        payload: '{"id":9223372036854775807,"name":"Max"}',
        subscriber: 'search',
      },
    ]);
  });

  it('reports the first record whose messages SQS did not take, so Lambda retries from it', async () => {
    sqs
      .on(SendMessageBatchCommand)
      .resolvesOnce({ Successful: [{ Id: '0', MessageId: 'm', MD5OfMessageBody: '' }] })
      .resolves({ Failed: [{ Id: '0', SenderFault: false, Code: 'InternalError' }] });
    const handle = createFanoutHandler({
      sqs: new SQSClient({}),
      deliveryQueueUrl: 'https://sqs.example/delivery',
      subscriberNames: ['audit'],
    });
    const result = await handle(
      streamEvent([
        { eventName: 'INSERT', id: 1n, name: 'A' },
        { eventName: 'INSERT', id: 2n, name: 'B' },
        { eventName: 'INSERT', id: 3n, name: 'C' },
      ]),
    );
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: '101' }] });
    expect(sqs.commandCalls(SendMessageBatchCommand)).toHaveLength(2);
  });
});

describe('the webhook delivery', () => {
  const handler = () =>
    createDeliverHandler({
      sqs: new SQSClient({}),
      secretsManager: new SecretsManagerClient({}),
      deliveryQueueUrl: 'https://sqs.example/delivery',
      deadLetterQueueUrl: 'https://sqs.example/dead-letters',
      subscribers: [{ name: 'audit', url: receiver.url, secretArn: 'arn:secret:audit' }],
      sendOptions: { timeoutMilliseconds: 1_000 },
      logger: quiet,
    });

  function queueEvent(receiveCount: number, subscriber = 'audit'): SQSEvent {
    return {
      Records: [
        {
          messageId: 'message-1',
          receiptHandle: 'receipt-1',
          body: JSON.stringify({
            webhookId: 'msg_event-0',
            payload: '{"id":-9223372036854775808,"name":"Min"}',
            subscriber,
          }),
          attributes: { ApproximateReceiveCount: String(receiveCount) } as never,
          messageAttributes: {},
          md5OfBody: '',
          eventSource: 'aws:sqs',
          eventSourceARN: 'arn:aws:sqs:eu-west-1:1:delivery',
          awsRegion: 'eu-west-1',
        },
      ],
    };
  }

  it('delivers a message signed with the secret from Secrets Manager, and is done with it', async () => {
    const handle = handler();
    expect(await handle(queueEvent(1))).toEqual({ batchItemFailures: [] });
    expect(receiver.deliveries).toEqual([
      expect.objectContaining({
        webhookId: 'msg_event-0',
        body: '{"id":-9223372036854775808,"name":"Min"}',
        verified: true,
      }),
    ]);
    await handle(queueEvent(1));
    // The secret is read once and reused.
    expect(secretsManager.commandCalls(GetSecretValueCommand)).toHaveLength(1);
    expect(sqs.calls()).toHaveLength(0);
  });

  it.each(defaultRetrySchedule.map((delay, index) => [index + 1, delay]))(
    'hides a message that failed attempt %i for %i s and hands it back',
    async (attempt, delay) => {
      receiver.setMode('fail');
      const result = await handler()(queueEvent(attempt));
      expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'message-1' }] });
      const [call] = sqs.commandCalls(ChangeMessageVisibilityCommand);
      expect(call?.args[0].input).toEqual({
        QueueUrl: 'https://sqs.example/delivery',
        ReceiptHandle: 'receipt-1',
        VisibilityTimeout: delay,
      });
      // SQS allows at most 12 hours.
      expect(delay).toBeLessThanOrEqual(12 * 60 * 60);
    },
  );

  it('moves a message that failed its last attempt to the dead-letter queue with its last failure', async () => {
    receiver.setMode('fail');
    const attempts = defaultRetrySchedule.length + 1;
    expect(await handler()(queueEvent(attempts))).toEqual({ batchItemFailures: [] });
    const [call] = sqs.commandCalls(SendMessageCommand);
    expect(call?.args[0].input.QueueUrl).toBe('https://sqs.example/dead-letters');
    expect(JSON.parse(call?.args[0].input.MessageBody ?? '')).toEqual({
      webhookId: 'msg_event-0',
      payload: '{"id":-9223372036854775808,"name":"Min"}',
      subscriber: 'audit',
      attempts,
      lastFailure: 'answered HTTP 500',
      failedAt: expect.any(String),
    });
  });

  it('dead-letters a message for a subscriber the stage no longer has', async () => {
    expect(await handler()(queueEvent(1, 'removed'))).toEqual({ batchItemFailures: [] });
    expect(sqs.commandCalls(SendMessageCommand)).toHaveLength(1);
    expect(receiver.deliveries).toHaveLength(0);
  });

  it('hands a message back when an AWS call fails, to try again after the visibility timeout', async () => {
    secretsManager.on(GetSecretValueCommand).rejects(new Error('throttled'));
    expect(await handler()(queueEvent(1))).toEqual({
      batchItemFailures: [{ itemIdentifier: 'message-1' }],
    });
  });
});
