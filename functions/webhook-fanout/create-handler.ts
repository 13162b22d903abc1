/**
 * The webhook fan-out: a message per stream record and subscriber of its type. A record not all
 * sent is a batch item failure, retried (receivers dedupe); a batch still failing is kept.
 */
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { backgroundMarginMilliseconds, budgeted } from '../shared/platform/invocation-budget.ts';
import {
  createLogger,
  type InvocationContext,
  invocationLoggers,
} from '../shared/platform/logger.ts';
import { flushSpans, inSpan } from '../shared/platform/spans.ts';
import { parseTraceparent, requestTrace } from '../shared/platform/trace-context.ts';
import {
  type FanoutDependencies,
  queuePlantEventDeliveries,
} from '../shared/webhooks/queue-deliveries.ts';
import type { PlantStreamRecord } from '../shared/webhooks/stream-records.ts';

export function createHandler(dependencies: FanoutDependencies) {
  const loggerOf = invocationLoggers(
    dependencies.logger ?? createLogger({ service: 'webhook-fanout' }),
  );
  return budgeted(
    backgroundMarginMilliseconds,
    async (
      event: DynamoDBStreamEvent,
      context?: InvocationContext,
    ): Promise<DynamoDBBatchResponse> => {
      const records = event.Records as PlantStreamRecord[];
      // Linked to each event's request: a batch carries many traces.
      const span = {
        kind: 'consumer',
        service: 'webhook-fanout',
        context: requestTrace(undefined),
        links: records.map((record) => parseTraceparent(record.dynamodb?.NewImage?.traceparent?.S)),
      } as const;
      const { failedRecord } = await inSpan('webhook-fanout', span, () =>
        queuePlantEventDeliveries(records, dependencies, loggerOf(context)),
      ).finally(flushSpans);
      // Lambda retries from the first failed record, the later ones with it.
      const itemIdentifier = failedRecord?.dynamodb?.SequenceNumber ?? '';
      return { batchItemFailures: failedRecord === undefined ? [] : [{ itemIdentifier }] };
    },
  );
}
