import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../../../../functions/shared/errors/errors.ts';
import {
  bundleLimits,
  type DeliveryMessage,
  firstDeliveryMessage,
  parseDeliveryMessages,
} from '../../../../functions/shared/webhooks/delivery-message.ts';
import {
  bundlesOf,
  queueOf,
  sqsDeliveryQueue,
  unsentOf,
} from '../../../../functions/shared/webhooks/delivery-queue.ts';

const message = firstDeliveryMessage({ webhookId: 'msg_1', payload: '{}' }, 'audit', 0);

/** A queue whose every SendMessageBatch fails one entry as `failed` says. */
const refusing = (failed: { SenderFault: boolean; Code: string }) =>
  sqsDeliveryQueue({ send: async () => ({ Failed: [{ Id: '0', ...failed }] }) } as never, 'q');

describe('the delivery queue', () => {
  it('rejects with 503/50300 when SQS fails an entry on its side (safe to send again)', async () => {
    const sent = refusing({ SenderFault: false, Code: 'InternalError' }).send([message]);
    await expect(sent).rejects.toBeInstanceOf(ApiError);
    await expect(sent).rejects.toMatchObject({ code: { error: 50300, statusCode: 503 } });
  });

  it('rejects with 500/50000, marked refused, when SQS blames the entry itself', async () => {
    const sent = refusing({ SenderFault: true, Code: 'InvalidParameterValue' }).send([message]);
    await expect(sent).rejects.toMatchObject({ code: { error: 50000 }, refused: true });
    await expect(sent).rejects.toThrow(
      'SQS did not take 1 of 1 delivery messages (InvalidParameterValue)',
    );
  });

  it('names the messages it did not queue, and only those', async () => {
    const messages = Array.from({ length: 25 }, (_, index) =>
      firstDeliveryMessage({ webhookId: `msg_${index}`, payload: '{}' }, `audit${index}`, 0),
    );
    let batch = 0;
    // Each to its own subscriber, so a message a bundle. The second batch fails its fourth entry; the third batch's request fails whole.
    const queue = sqsDeliveryQueue(
      {
        send: async () => {
          batch += 1;
          if (batch === 2)
            return { Failed: [{ Id: '3', SenderFault: false, Code: 'InternalError' }] };
          if (batch === 3) throw Object.assign(new Error('timed out'), { name: 'TimeoutError' });
          return {};
        },
      } as never,
      'q',
    );
    const failure = await queue.send(messages).catch((error: unknown) => error);
    expect(
      unsentOf(failure, messages)
        .map((one) => one.webhookId)
        .sort(),
    ).toEqual(['msg_13', 'msg_20', 'msg_21', 'msg_22', 'msg_23', 'msg_24'].sort());
    expect(unsentOf(new Error('anything else'), messages)).toHaveLength(25);
    // One of them SQS could not take on its side: not refused for good, so sent again later.
    expect(failure).toMatchObject({ refused: false, code: { error: 50300 } });
  });

  it('is refused for good only when SQS blamed the sender for every message it did not take', async () => {
    let batch = 0;
    const queue = sqsDeliveryQueue(
      {
        send: async () => {
          batch += 1;
          return batch === 1
            ? { Failed: [{ Id: '0', SenderFault: true, Code: 'InvalidMessageContents' }] }
            : { Failed: [{ Id: '0', SenderFault: false, Code: 'InternalError' }] };
        },
      } as never,
      'q',
    );
    const twenty = Array.from({ length: 20 }, (_, index) =>
      firstDeliveryMessage({ webhookId: `msg_${index}`, payload: '{}' }, `audit${index}`, 0),
    );
    await expect(queue.send(twenty)).rejects.toMatchObject({ refused: false });
    await expect(refusing({ SenderFault: true, Code: 'X' }).send(twenty)).rejects.toMatchObject({
      refused: true,
    });
  });

  it("bundles each subscriber's messages, in order, within ten and 24 KiB, and names a failed bundle's all", async () => {
    const to = (subscriber: string, index: number, bytes = 2) =>
      firstDeliveryMessage(
        { webhookId: `msg_${index}`, payload: JSON.stringify('x'.repeat(bytes)) },
        subscriber,
        0,
      );
    const messages = [
      ...Array.from({ length: 23 }, (_, index) => to(index % 2 === 0 ? 'a' : 'b', index)),
      ...Array.from({ length: 5 }, (_, index) => to('big', 100 + index, 9_000)),
    ];
    const bundles = bundlesOf(messages);
    expect(bundles.map((bundle) => [bundle[0]?.subscriber, bundle.length])).toEqual([
      ['a', 10],
      ['b', 10],
      ['a', 2],
      ['b', 1],
      ['big', 2],
      ['big', 2],
      ['big', 1],
    ]);
    expect(bundles.flat().filter((one) => one.subscriber === 'a')).toEqual(
      messages.filter((one) => one.subscriber === 'a'),
    );
    const bodies: string[][] = [];
    const queue = sqsDeliveryQueue(
      {
        send: async (command: { input: { Entries: { MessageBody: string }[] } }) => {
          bodies.push(command.input.Entries.map((entry) => entry.MessageBody));
          return { Failed: [{ Id: '1', SenderFault: false, Code: 'InternalError' }] };
        },
      } as never,
      'q',
    );
    const failure = await queue.send(messages).catch((error: unknown) => error);
    // Seven bundles, ten to a batch: one request, each body within the limit, read back whole.
    expect(bodies).toHaveLength(1);
    for (const body of bodies[0] ?? []) {
      expect(Buffer.byteLength(body)).toBeLessThanOrEqual(bundleLimits.bodyBytes);
    }
    expect((bodies[0] ?? []).flatMap((body) => parseDeliveryMessages(body, 0))).toEqual(
      bundles.flat(),
    );
    expect(unsentOf(failure, messages)).toEqual(bundles[1]);
  });

  it("puts each subscriber's bundles on one of the stage's queues, always the same, and every queue gets its share", async () => {
    const urls = ['q1', 'q2', 'q3'];
    const sent: { QueueUrl: string; subscribers: string[] }[] = [];
    const queue = sqsDeliveryQueue(
      {
        send: async (command: {
          input: { QueueUrl: string; Entries: { MessageBody: string }[] };
        }) => {
          const { QueueUrl, Entries } = command.input;
          const subscribers = Entries.flatMap((entry) =>
            parseDeliveryMessages(entry.MessageBody, 0).map(
              (one) => (one as DeliveryMessage).subscriber,
            ),
          );
          sent.push({ QueueUrl, subscribers });
          return {};
        },
      } as never,
      urls.join(' '),
    );
    // 300 subscribers, 12 events each: two bundles a subscriber.
    const messages = Array.from({ length: 12 }, (_, event) =>
      Array.from({ length: 300 }, (_, subscriber) =>
        firstDeliveryMessage({ webhookId: `msg_${event}`, payload: '{}' }, `ep_${subscriber}`, 0),
      ),
    ).flat();
    await queue.send(messages);
    const queuesOf = new Map<string, Set<string>>();
    for (const { QueueUrl, subscribers } of sent) {
      expect(subscribers.length).toBeLessThanOrEqual(10 * bundleLimits.messages);
      for (const subscriber of subscribers) {
        queuesOf.set(subscriber, (queuesOf.get(subscriber) ?? new Set()).add(QueueUrl));
        expect(QueueUrl).toBe(queueOf(urls, subscriber));
      }
    }
    expect(queuesOf.size).toBe(300);
    for (const queues of queuesOf.values()) expect(queues.size).toBe(1);
    expect(sent.reduce((sum, batch) => sum + batch.subscribers.length, 0)).toBe(3_600);
    // Each queue about a third of the subscribers (a hash of 300 names: within 80 to 120).
    for (const url of urls) {
      const share = [...queuesOf.values()].filter((queues) => queues.has(url)).length;
      expect([url, share >= 80 && share <= 120]).toEqual([url, true]);
    }
    // One URL: that queue, whatever the subscriber.
    expect(queueOf(['only'], 'ep_1')).toBe('only');
  });
});
