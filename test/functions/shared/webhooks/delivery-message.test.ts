/**
 * A queue body as the delivery reads it: what it needs must be there; the members it only
 * carries along are taken when they are what they say, and left out when they are anything else.
 */
import { describe, expect, it } from '@jest/globals';
import {
  type DeliveryMessage,
  deliveryMessageBody,
  deliveryMessagesBody,
  parseDeliveryMessages,
} from '../../../../functions/shared/webhooks/delivery-message.ts';
import { allowedBody } from '../../../../local/pipeline/sqs-rules.ts';

const needed = { webhookId: 'msg_1_v1', payload: '{"id":1}', subscriber: 'audit' };

/** The one message of a body, or `undefined` when it is none. */
function parseDeliveryMessage(body: string, now: number): DeliveryMessage | undefined {
  const [message] = parseDeliveryMessages(body, now);
  return typeof message === 'string' ? undefined : message;
}

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

  it('carries the event’s traceparent when it is one, and leaves out anything else', () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const carried = parseDeliveryMessage(JSON.stringify({ ...needed, traceparent }), 100);
    expect(carried?.traceparent).toBe(traceparent);
    const forged = JSON.stringify({ ...needed, traceparent: `${traceparent}\r\nX-Evil: 1` });
    expect(parseDeliveryMessage(forged, 100)).toEqual({
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

describe("a bundle of one subscriber's deliveries", () => {
  const first: DeliveryMessage = { ...needed, attempt: 1, dueAt: 5, queuedAt: 5 };
  const second: DeliveryMessage = { ...first, webhookId: 'msg_2_v1', payload: '{"id":2}' };

  it('reads back each message, in order; one message is its own body', () => {
    const body = deliveryMessagesBody([first, second]);
    expect(JSON.parse(body)).toEqual({ deliveries: [first, second] });
    expect(parseDeliveryMessages(body, 100)).toEqual([first, second]);
    expect(deliveryMessagesBody([first])).toBe(deliveryMessageBody(first));
  });

  it('gives back a member that is no message as its text, and still reads the others', () => {
    const body = JSON.stringify({ deliveries: [first, { ...needed, payload: 5 }] });
    expect(parseDeliveryMessages(body, 100)).toEqual([
      first,
      JSON.stringify({ ...needed, payload: 5 }),
    ]);
    expect(parseDeliveryMessages('{', 100)).toEqual(['{']);
    expect(parseDeliveryMessages('null', 100)).toEqual(['null']);
  });
});

describe('deliveryMessageBody', () => {
  it('carries every character a plant may hold, in only the characters SQS takes', () => {
    // U+FFFE and U+FFFF (JSON leaves them), controls, a lone surrogate, and one beyond the BMP.
    const name = 'a\uFFFFb\uFFFEc\u0000d\u001Fe\uD800f\u{1F331}';
    const message: DeliveryMessage = {
      ...needed,
      payload: JSON.stringify({ id: 1, name }),
      attempt: 1,
      dueAt: 5,
      queuedAt: 5,
    };
    expect(allowedBody.test(JSON.stringify(message))).toBe(false);
    const body = deliveryMessageBody(message);
    expect(allowedBody.test(body)).toBe(true);
    expect(parseDeliveryMessage(body, 9)).toEqual(message);
  });
});
