/**
 * The one fault no emulator produces on demand: SQS taking some entries of a batch and refusing
 * others (moto takes or refuses a batch whole), for the fan-out and for the delivery's retries.
 * Everything else of the deployed path is tested on emulators (`test/webhooks/`).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterEach, expect, it } from '@jest/globals';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { createHandler as createDeliverHandler } from '../../functions/deliver-webhook/create-handler.ts';
import { createLogger } from '../../functions/shared/platform/logger.ts';
import {
  deliveryMessagesBody,
  firstDeliveryMessage,
  parseDeliveryMessages,
} from '../../functions/shared/webhooks/delivery-message.ts';
import { sqsDeliveryQueue } from '../../functions/shared/webhooks/delivery-queue.ts';
import { subscriptionOf } from '../../functions/shared/webhooks/plant-events.ts';
import { fanoutLog, fixedSubscriptions } from '../../functions/shared/webhooks/queue-deliveries.ts';
import { createHandler as createFanoutHandler } from '../../functions/webhook-fanout/create-handler.ts';
import { deliveryEvent, deliveryRecord } from '../support/sqs-event.ts';

const sqs = mockClient(SQSClient);
const quiet = createLogger({}, () => {});

afterEach(() => {
  sqs.reset();
});

/** A stream batch of three new plants, sequence numbers 100 to 102. */
function threeNewPlants(): DynamoDBStreamEvent {
  return {
    Records: [1n, 2n, 3n].map((id, index) => ({
      eventID: `event-${index}`,
      eventName: 'INSERT',
      dynamodb: { SequenceNumber: String(100 + index), NewImage: marshall({ id, name: 'A' }) },
    })),
  } as unknown as DynamoDBStreamEvent;
}

it('reports the first record whose messages SQS did not all take, so Lambda retries from it', async () => {
  // The batch's bundle fails whole; then the first record's deliveries are taken, the second's not.
  sqs
    .on(SendMessageBatchCommand)
    .resolvesOnce({ Failed: [{ Id: '0', SenderFault: false, Code: 'InternalError' }] })
    .resolvesOnce({ Successful: [{ Id: '0', MessageId: 'm', MD5OfMessageBody: '' }] })
    .resolves({ Failed: [{ Id: '0', SenderFault: false, Code: 'InternalError' }] });
  const handle = createFanoutHandler({
    deliveries: sqsDeliveryQueue(new SQSClient({}), 'https://sqs.example/delivery'),
    subscriptions: fixedSubscriptions(['audit'].map((name) => subscriptionOf(name, {}))),
    logger: quiet,
  });
  const event = threeNewPlants();
  await expect(handle(event)).resolves.toEqual({ batchItemFailures: [{ itemIdentifier: '101' }] });
  expect(sqs.commandCalls(SendMessageBatchCommand)).toHaveLength(3);
});

it('hands back the message whose next attempt SQS refused, and only that one', async () => {
  const subscriber = createServer((request, response) => {
    request.resume().on('end', () => response.writeHead(500).end());
  });
  await new Promise<void>((resolve) => subscriber.listen(0, '127.0.0.1', resolve));
  sqs.on(SendMessageBatchCommand).resolves({
    Successful: [{ Id: '0', MessageId: 'm0', MD5OfMessageBody: '' }],
    Failed: [{ Id: '1', SenderFault: false, Code: 'InternalError' }],
  });
  try {
    const deliver = createDeliverHandler({
      sqs: new SQSClient({}),
      secretsManager: { send: async () => ({ SecretString: 'A'.repeat(48) }) } as never,
      retryQueueUrl: 'https://sqs.example/retries',
      deadLetterQueueUrl: 'https://sqs.example/dead-letters',
      subscribers: [
        {
          name: 'audit',
          url: `http://127.0.0.1:${(subscriber.address() as AddressInfo).port}/`,
          secretArn: 'arn:secret',
        },
      ],
      logger: quiet,
    });
    const event = deliveryEvent(['first', 'second'], '{"id":1,"name":"A"}');
    await expect(deliver(event)).resolves.toEqual({
      batchItemFailures: [{ itemIdentifier: 'second' }],
    });
    // Both retries went in one request, each delayed by the schedule's first wait (5 s).
    const [call] = sqs.commandCalls(SendMessageBatchCommand);
    expect(call?.args[0].input.Entries?.map((entry) => entry.DelaySeconds)).toEqual([5, 5]);
  } finally {
    subscriber.close();
  }
});

it('sets aside a record SQS refuses as the sender’s fault, and queues the records after it', async () => {
  const refusedOnce = { Failed: [{ Id: '0', SenderFault: true, Code: 'InvalidMessageContents' }] };
  // The batch's bundle, then the records one by one: the second refused.
  sqs
    .on(SendMessageBatchCommand)
    .resolvesOnce(refusedOnce)
    .resolvesOnce({ Successful: [{ Id: '0', MessageId: 'm', MD5OfMessageBody: '' }] })
    .resolvesOnce(refusedOnce)
    .resolves({ Successful: [{ Id: '0', MessageId: 'm', MD5OfMessageBody: '' }] });
  const lines: string[] = [];
  const handle = createFanoutHandler({
    deliveries: sqsDeliveryQueue(new SQSClient({}), 'https://sqs.example/delivery'),
    subscriptions: fixedSubscriptions(['audit'].map((name) => subscriptionOf(name, {}))),
    logger: createLogger({}, (line) => lines.push(line)),
  });
  const event = threeNewPlants();
  await expect(handle(event)).resolves.toEqual({ batchItemFailures: [] });
  expect(sqs.commandCalls(SendMessageBatchCommand)).toHaveLength(4);
  const refused = lines
    .map((line) => JSON.parse(line))
    .filter((line) => line.message === fanoutLog.refused);
  expect(refused).toEqual([
    expect.objectContaining({ [fanoutLog.refusedField]: 1, eventID: 'event-1' }),
  ]);
});

it('queues a stream batch as one bundle a subscriber, read back as every event in order', async () => {
  sqs.on(SendMessageBatchCommand).resolves({});
  const handle = createFanoutHandler({
    deliveries: sqsDeliveryQueue(new SQSClient({}), 'https://sqs.example/delivery'),
    subscriptions: fixedSubscriptions(['audit', 'crm'].map((name) => subscriptionOf(name, {}))),
    logger: quiet,
  });
  await expect(handle(threeNewPlants())).resolves.toEqual({ batchItemFailures: [] });
  const calls = sqs.commandCalls(SendMessageBatchCommand);
  expect(calls).toHaveLength(1);
  const bodies = calls[0]?.args[0].input.Entries?.map((entry) => entry.MessageBody ?? '') ?? [];
  expect(
    bodies.map((body) =>
      parseDeliveryMessages(body, 0).map((one) =>
        typeof one === 'string' ? one : `${one.subscriber} ${JSON.parse(one.payload).id}`,
      ),
    ),
  ).toEqual([
    ['audit 1', 'audit 2', 'audit 3'],
    ['crm 1', 'crm 2', 'crm 3'],
  ]);
});

it("queues a bundle's unexpectedly failed deliveries again alone, hands back a lone one, and queues the others' retries", async () => {
  const failing = createServer((request, response) => {
    request.resume().on('end', () => response.writeHead(500).end());
  });
  await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
  sqs.on(SendMessageBatchCommand).resolves({});
  try {
    const deliver = createDeliverHandler({
      sqs: new SQSClient({}),
      // The audit subscriber's secret cannot be read: its attempts fail before they are made.
      secretsManager: {
        send: async (command: { input: { SecretId: string } }) => {
          if (command.input.SecretId === 'arn:broken') throw new Error('Secrets Manager is down');
          return { SecretString: 'A'.repeat(48) };
        },
      } as never,
      retryQueueUrl: 'https://sqs.example/retries',
      deadLetterQueueUrl: 'https://sqs.example/dead-letters',
      subscribers: [
        { name: 'audit', url: 'http://127.0.0.1:9/', secretArn: 'arn:broken' },
        {
          name: 'crm',
          url: `http://127.0.0.1:${(failing.address() as AddressInfo).port}/`,
          secretArn: 'arn:ok',
        },
      ],
      logger: quiet,
    });
    const bundle = (subscriber: string, ids: readonly string[]) =>
      deliveryMessagesBody(
        ids.map((id) => firstDeliveryMessage({ webhookId: id, payload: '{}' }, subscriber, 0)),
      );
    const event = {
      Records: [
        deliveryRecord('one', bundle('audit', ['a', 'b'])),
        deliveryRecord('two', bundle('crm', ['c', 'd'])),
        deliveryRecord('three', bundle('audit', ['e'])),
      ],
    };
    // The first bundle's members go back alone, due at once, the same attempt: a bundle never
    // comes back whole, with deliveries it had made. The lone third comes back as it was (SQS
    // counts its receives). The second's members failed their attempts, so their next ones wait
    // in the retry queue, each a message of its own.
    await expect(deliver(event)).resolves.toEqual({
      batchItemFailures: [{ itemIdentifier: 'three' }],
    });
    const [call, ...more] = sqs.commandCalls(SendMessageBatchCommand);
    expect(more).toHaveLength(0);
    const retried = call?.args[0].input.Entries?.map((entry) => {
      const message = JSON.parse(entry.MessageBody ?? '');
      return [entry.DelaySeconds, message.webhookId, message.attempt];
    });
    expect(retried).toEqual([
      [0, 'a', 1],
      [0, 'b', 1],
      [5, 'c', 2],
      [5, 'd', 2],
    ]);
  } finally {
    failing.close();
  }
});
