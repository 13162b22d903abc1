/**
 * moto's SQS as the test beds use it — batches sent while several pollers long-poll, receive and
 * delete — strands no message and loses none (`beds/moto_server.py` fixes the
 * races that did: a message received by an answer that failed with a 500 waited out its
 * visibility timeout, and a message sent during a delete vanished).
 */
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { type MotoServer, startMotoServer } from '../../beds/moto-server.ts';

let moto: MotoServer;

beforeAll(async () => {
  moto = await startMotoServer();
}, 180_000);

afterAll(async () => {
  await moto?.stop();
});

it('hands every message of concurrent batch sends to exactly one of eight long-polling pollers', async () => {
  // One attempt a call: an answer moto failed is seen, not retried away.
  const sqs = new SQSClient({
    endpoint: moto.url,
    region: moto.region,
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    maxAttempts: 1,
  });
  const { QueueUrl } = await sqs.send(
    new CreateQueueCommand({ QueueName: 'races', Attributes: { VisibilityTimeout: '180' } }),
  );
  const failures: string[] = [];
  const received = new Map<string, number>();
  let sent = 0;
  const sendingUntil = Date.now() + 15_000;
  const sender = async () => {
    while (Date.now() < sendingUntil) {
      const entries = Array.from({ length: 10 }, (_, index) => ({
        Id: String(index),
        MessageBody: `${sent + index} ${'x'.repeat(300)}`,
      }));
      sent += entries.length;
      await sqs
        .send(new SendMessageBatchCommand({ QueueUrl, Entries: entries }))
        .catch((error: Error) => failures.push(`send: ${error.name}`));
    }
  };
  const poller = async () => {
    let empty = 0;
    while (Date.now() < sendingUntil || empty < 2) {
      let messages: Message[] = [];
      try {
        ({ Messages: messages = [] } = await sqs.send(
          new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
        ));
      } catch (error) {
        failures.push(`receive: ${(error as Error).name}`);
        continue;
      }
      empty = messages.length === 0 ? empty + 1 : 0;
      if (messages.length === 0) continue;
      for (const message of messages) {
        received.set(message.Body ?? '', (received.get(message.Body ?? '') ?? 0) + 1);
      }
      const { Failed = [] } = await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl,
          Entries: messages.map((message, index) => ({
            Id: String(index),
            ReceiptHandle: message.ReceiptHandle,
          })),
        }),
      );
      for (const failure of Failed) failures.push(`delete: ${failure.Code}`);
    }
  };
  await Promise.all([sender(), sender(), ...Array.from({ length: 8 }, poller)]);
  sqs.destroy();
  console.info(JSON.stringify({ sent, received: received.size, failures }));
  expect(failures).toEqual([]);
  expect(received.size).toBe(sent);
  expect([...received.values()].filter((count) => count > 1)).toEqual([]);
}, 120_000);
