/** SQS events as Lambda's event source mapping hands them to the delivery function. */
import type { SQSEvent, SQSRecord } from 'aws-lambda';

/** One delivery-queue record with `body` as the message body. */
export function deliveryRecord(messageId: string, body: string): SQSRecord {
  return {
    messageId,
    receiptHandle: `receipt-${messageId}`,
    body,
    attributes: {} as SQSRecord['attributes'],
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:deliveries',
    awsRegion: 'us-east-1',
  };
}

/** An event of one delivery message for `subscriber`, first attempt. */
export function deliveryEvent(
  messageIds: readonly string[],
  payload: string,
  subscriber = 'audit',
): SQSEvent {
  return {
    Records: messageIds.map((id) =>
      deliveryRecord(id, JSON.stringify({ webhookId: `msg_${id}`, payload, subscriber })),
    ),
  };
}
