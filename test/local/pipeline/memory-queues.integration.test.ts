/**
 * `npm start`'s in-process queues keep SQS's rules: each behaviour the webhook pipeline relies on
 * is checked on moto's SQS and on the memory queues alike, so the two cannot drift. What moto
 * does not serve (a message move task, saving to a file) is checked on the memory queues alone,
 * against the SQS API Reference.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type MotoServer, startMotoServer } from '../../../beds/moto-server.ts';
import { type MemoryQueues, memoryQueues } from '../../../local/pipeline/memory-queues.ts';

type Sqs = Pick<SQSClient, 'send'>;

/** A queue on one target: its URL and ARN, and its dead letters' when it has a redrive policy. */
interface TestQueue {
  readonly url: string;
  readonly deadLetters: { readonly url: string; readonly arn: string };
}

interface Target {
  readonly sqs: Sqs;
  createQueue(visibilityTimeoutSeconds: number, maxReceiveCount: number): Promise<TestQueue>;
}

let moto: MotoServer;
let memory: MemoryQueues;
let counter = 0;

beforeAll(async () => {
  moto = await startMotoServer();
  memory = memoryQueues();
}, 180_000);

afterAll(async () => {
  memory?.close();
  await moto?.stop();
});

const targets: Record<string, () => Target> = {
  moto: () => ({
    sqs: moto.sqs,
    createQueue: async (visibility, maxReceiveCount) => {
      counter += 1;
      const created = async (name: string, attributes: Record<string, string>) => {
        const { QueueUrl = '' } = await moto.sqs.send(
          new CreateQueueCommand({ QueueName: name, Attributes: attributes }),
        );
        const { Attributes } = await moto.sqs.send(
          new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
        );
        return { url: QueueUrl, arn: Attributes?.QueueArn ?? '' };
      };
      const deadLetters = await created(`dead-${counter}`, {});
      const queue = await created(`work-${counter}`, {
        VisibilityTimeout: String(visibility),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: deadLetters.arn, maxReceiveCount }),
      });
      return { url: queue.url, deadLetters };
    },
  }),
  memory: () => ({
    sqs: memory.sqs,
    createQueue: async (visibility, maxReceiveCount) => {
      counter += 1;
      const deadLetters = memory.create(`dead-${counter}`, { visibilityTimeoutSeconds: 30 });
      const queue = memory.create(`work-${counter}`, {
        visibilityTimeoutSeconds: visibility,
        deadLetter: { queueArn: deadLetters.arn, maxReceiveCount },
      });
      return { url: queue.url, deadLetters };
    },
  }),
};

const receive = (sqs: Sqs, url: string, waitSeconds = 0, visibility?: number) =>
  sqs
    .send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: waitSeconds,
        MessageSystemAttributeNames: ['All'],
        ...(visibility === undefined ? {} : { VisibilityTimeout: visibility }),
      }),
    )
    .then(({ Messages = [] }) => Messages);

const nameOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'no error',
    (error: Error) => error.name,
  );

describe.each(Object.keys(targets))('SQS on %s', (name) => {
  let target: Target;
  beforeAll(() => {
    target = (targets[name] as () => Target)();
  });

  it('holds a delayed message back until its delay has passed', async () => {
    const queue = await target.createQueue(30, 5);
    await target.sqs.send(
      new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'later', DelaySeconds: 1 }),
    );
    expect(await receive(target.sqs, queue.url)).toHaveLength(0);
    const sentAt = Date.now();
    const [message] = await receive(target.sqs, queue.url, 3);
    expect(message?.Body).toBe('later');
    expect(Date.now() - sentAt).toBeGreaterThan(500);
  });

  it('hides a received message for the visibility timeout, then hands it out again, counted', async () => {
    const queue = await target.createQueue(30, 5);
    await target.sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'once' }));
    const [first] = await receive(target.sqs, queue.url, 0, 1);
    expect(first?.Attributes?.ApproximateReceiveCount).toBe('1');
    expect(await receive(target.sqs, queue.url)).toHaveLength(0);
    const [again] = await receive(target.sqs, queue.url, 3);
    expect(again?.MessageId).toBe(first?.MessageId);
    expect(again?.Attributes?.ApproximateReceiveCount).toBe('2');
    await target.sqs.send(
      new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: again?.ReceiptHandle }),
    );
    expect(await receive(target.sqs, queue.url, 2)).toHaveLength(0);
  });

  it('moves a message received maxReceiveCount times to the dead-letter queue, same id', async () => {
    const queue = await target.createQueue(30, 2);
    await target.sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'doomed' }));
    const [first] = await receive(target.sqs, queue.url, 0, 0);
    await receive(target.sqs, queue.url, 0, 0);
    expect(await receive(target.sqs, queue.url, 0, 0)).toHaveLength(0);
    const [dead] = await receive(target.sqs, queue.deadLetters.url, 2);
    expect(dead?.MessageId).toBe(first?.MessageId);
    expect(dead?.Body).toBe('doomed');
  });

  it('keeps a message’s attributes for a receive that asks for them, and in its dead letters', async () => {
    const queue = await target.createQueue(30, 2);
    const traceparent = {
      DataType: 'String',
      StringValue: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`,
    };
    await target.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queue.url,
        Entries: [{ Id: '0', MessageBody: 'marked', MessageAttributes: { traceparent } }],
      }),
    );
    const receiveAsking = (url: string) =>
      target.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: url,
          MessageAttributeNames: ['All'],
          VisibilityTimeout: 0,
          WaitTimeSeconds: 2,
        }),
      );
    const [plain] = await receive(target.sqs, queue.url, 0, 0);
    expect(plain?.Body).toBe('marked');
    expect(plain?.MessageAttributes).toBeUndefined();
    const asked = await receiveAsking(queue.url);
    expect(asked.Messages?.[0]?.MessageAttributes).toEqual({ traceparent });
    // Received twice: in the dead letters at the next receive, its attributes with it.
    expect(await receive(target.sqs, queue.url, 0, 0)).toHaveLength(0);
    const dead = await receiveAsking(queue.deadLetters.url);
    expect(dead.Messages?.[0]?.MessageAttributes).toEqual({ traceparent });
  });

  it('answers a waiting receive as soon as a message is sent', async () => {
    const queue = await target.createQueue(30, 5);
    const started = Date.now();
    const waiting = receive(target.sqs, queue.url, 10);
    setTimeout(() => {
      void target.sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'now' }));
    }, 300);
    expect((await waiting).map((message) => message.Body)).toEqual(['now']);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('refuses what SQS refuses: 11 entries, repeated ids, a delay over 900 s, an unknown queue, a delete without its handle', async () => {
    const queue = await target.createQueue(30, 5);
    const entries = (count: number, id = (index: number) => String(index)) =>
      Array.from({ length: count }, (_, index) => ({ Id: id(index), MessageBody: 'x' }));
    const batch = (batchEntries: ReturnType<typeof entries>) =>
      target.sqs.send(new SendMessageBatchCommand({ QueueUrl: queue.url, Entries: batchEntries }));
    expect(await nameOf(batch(entries(11)))).toBe('TooManyEntriesInBatchRequest');
    expect(await nameOf(batch(entries(2, () => 'same')))).toBe('BatchEntryIdsNotDistinct');
    expect(await nameOf(batch(entries(0)))).toBe('EmptyBatchRequest');
    expect(
      await nameOf(
        target.sqs.send(
          new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'x', DelaySeconds: 901 }),
        ),
      ),
    ).toBe('InvalidParameterValue');
    expect(
      await nameOf(
        target.sqs.send(
          new SendMessageCommand({ QueueUrl: `${queue.url}-missing`, MessageBody: 'x' }),
        ),
      ),
    ).toBe('QueueDoesNotExist');
    expect(
      await nameOf(target.sqs.send(new DeleteMessageCommand({ QueueUrl: queue.url } as never))),
    ).toBe('ReceiptHandleIsInvalid');
  });

  it('counts waiting, delayed and in-flight messages apart', async () => {
    const queue = await target.createQueue(30, 5);
    const send = (body: string, delay = 0) =>
      target.sqs.send(
        new SendMessageCommand({ QueueUrl: queue.url, MessageBody: body, DelaySeconds: delay }),
      );
    await send('taken');
    await receive(target.sqs, queue.url);
    await send('waiting');
    await send('delayed', 60);
    const { Attributes } = await target.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queue.url, AttributeNames: ['All'] }),
    );
    expect(Attributes).toMatchObject({
      ApproximateNumberOfMessages: '1',
      ApproximateNumberOfMessagesNotVisible: '1',
      ApproximateNumberOfMessagesDelayed: '1',
    });
  });
});

describe('memory queues alone', () => {
  it('moves the dead letters back with a move task, as the runbook redrives them', async () => {
    const queues = memoryQueues();
    try {
      const dead = queues.create('dead', { visibilityTimeoutSeconds: 30 });
      const work = queues.create('work', {
        visibilityTimeoutSeconds: 30,
        deadLetter: { queueArn: dead.arn, maxReceiveCount: 1 },
      });
      await queues.sqs.send(new SendMessageCommand({ QueueUrl: dead.url, MessageBody: 'again' }));
      await queues.sqs.send(
        new StartMessageMoveTaskCommand({ SourceArn: dead.arn, DestinationArn: work.arn }),
      );
      expect(queues.bodies(dead.url)).toEqual([]);
      expect((await receive(queues.sqs, work.url)).map((message) => message.Body)).toEqual([
        'again',
      ]);
    } finally {
      queues.close();
    }
  });

  it('saves every message when closed and takes them up at the next start, delays kept', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'plant-store-queues-'));
    const file = join(folder, 'queues.json');
    try {
      const first = memoryQueues({ file });
      const queue = first.create('work', { visibilityTimeoutSeconds: 30 });
      await first.sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'now' }));
      await first.sqs.send(
        new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'later', DelaySeconds: 1 }),
      );
      first.close();
      expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({ version: 1 });

      const second = memoryQueues({ file });
      // Taken up once: a crash later cannot bring the same messages back again.
      expect(existsSync(file)).toBe(false);
      try {
        const again = second.create('work', { visibilityTimeoutSeconds: 30 });
        expect((await receive(second.sqs, again.url)).map((message) => message.Body)).toEqual([
          'now',
        ]);
        const [later] = await receive(second.sqs, again.url, 3);
        expect(later?.Body).toBe('later');
      } finally {
        second.close();
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('takes up after a crash (no close) every message sent and not deleted, moved ones where they went', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'plant-store-queues-'));
    const file = join(folder, 'queues.json');
    try {
      const crashed = memoryQueues({ file });
      const dead = crashed.create('dead', { visibilityTimeoutSeconds: 30 });
      const work = crashed.create('work', { visibilityTimeoutSeconds: 30 });
      for (const body of ['kept', 'deleted', 'in flight']) {
        await crashed.sqs.send(new SendMessageCommand({ QueueUrl: work.url, MessageBody: body }));
      }
      await crashed.sqs.send(new SendMessageCommand({ QueueUrl: dead.url, MessageBody: 'moved' }));
      const received = await receive(crashed.sqs, work.url, 0, 300);
      const deleted = received.find((message) => message.Body === 'deleted') ?? received[0];
      await crashed.sqs.send(
        new DeleteMessageCommand({ QueueUrl: work.url, ReceiptHandle: deleted?.ReceiptHandle }),
      );
      await crashed.sqs.send(
        new StartMessageMoveTaskCommand({ SourceArn: dead.arn, DestinationArn: work.arn }),
      );
      // No close: the process died. Its in-flight message is visible again at once.
      const restarted = memoryQueues({ file });
      try {
        restarted.create('dead', { visibilityTimeoutSeconds: 30 });
        const again = restarted.create('work', { visibilityTimeoutSeconds: 30 });
        const bodies = (await receive(restarted.sqs, again.url, 0, 10)).map((m) => m.Body);
        expect(bodies.sort()).toEqual(
          ['kept', 'deleted', 'in flight', 'moved'].filter((body) => body !== deleted?.Body).sort(),
        );
      } finally {
        restarted.close();
        crashed.close();
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('refuses to start on a file that holds no saved queues, saying which', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'plant-store-queues-'));
    const file = join(folder, 'queues.json');
    try {
      await writeFile(file, '{"queues":1}');
      expect(() => memoryQueues({ file })).toThrow(`${file} holds no saved queues`);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
