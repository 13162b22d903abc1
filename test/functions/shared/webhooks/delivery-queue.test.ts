import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../../../../functions/shared/errors/errors.ts';
import { firstDeliveryMessage } from '../../../../functions/shared/webhooks/delivery-message.ts';
import { sqsDeliveryQueue } from '../../../../functions/shared/webhooks/delivery-queue.ts';

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

  it('rejects with a fault when SQS blames the entry itself', async () => {
    const sent = refusing({ SenderFault: true, Code: 'InvalidParameterValue' }).send([message]);
    await expect(sent).rejects.not.toBeInstanceOf(ApiError);
    await expect(sent).rejects.toThrow('SQS refused 1 delivery messages (InvalidParameterValue)');
  });
});
