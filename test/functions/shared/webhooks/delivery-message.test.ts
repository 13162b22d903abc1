/**
 * A queue body as the delivery reads it: what it needs must be there; the members it only
 * carries along are taken when they are what they say, and left out when they are anything else.
 */
import { describe, expect, it } from '@jest/globals';
import { parseDeliveryMessage } from '../../../../functions/shared/webhooks/delivery-message.ts';

const needed = { webhookId: 'msg_1_v1', payload: '{"id":1}', subscriber: 'audit' };

describe('parseDeliveryMessage', () => {
  it('takes the members it carries along when they are what they say', () => {
    const body = { ...needed, version: 3, deliveryId: 'd1', attempt: 2, dueAt: 50, queuedAt: 40 };
    expect(parseDeliveryMessage(JSON.stringify(body), 100)).toEqual({
      ...needed,
      version: 3,
      deliveryId: 'd1',
      attempt: 2,
      dueAt: 50,
      queuedAt: 40,
    });
  });

  it('leaves out, or starts afresh, the members of another kind, and still delivers', () => {
    const body = {
      ...needed,
      version: 'three',
      deliveryId: 7,
      endpoint: { id: 'ep' },
      attempt: '2',
      dueAt: null,
      queuedAt: 'yesterday',
    };
    expect(parseDeliveryMessage(JSON.stringify(body), 100)).toEqual({
      ...needed,
      attempt: 1,
      dueAt: 100,
      queuedAt: 100,
    });
  });

  it('answers undefined for a body without what it needs, or not JSON', () => {
    expect(parseDeliveryMessage(JSON.stringify({ ...needed, payload: 5 }), 100)).toBeUndefined();
    expect(parseDeliveryMessage('{', 100)).toBeUndefined();
  });
});
