import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../../../../functions/shared/errors/errors.ts';
import { firstDeliveryMessage } from '../../../../functions/shared/webhooks/delivery-message.ts';
import {
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
      firstDeliveryMessage({ webhookId: `msg_${index}`, payload: '{}' }, 'audit', 0),
    );
    let batch = 0;
    // The second batch fails its fourth entry; the third batch's request fails whole.
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
      firstDeliveryMessage({ webhookId: `msg_${index}`, payload: '{}' }, 'audit', 0),
    );
    await expect(queue.send(twenty)).rejects.toMatchObject({ refused: false });
    await expect(refusing({ SenderFault: true, Code: 'X' }).send(twenty)).rejects.toMatchObject({
      refused: true,
    });
  });
});
