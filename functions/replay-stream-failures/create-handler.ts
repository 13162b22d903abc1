/**
 * Replays the stream batches the webhook fan-out gave up on. Lambda keeps each such batch whole
 * in the stream-failures bucket (an S3 on-failure destination: the invocation record with its
 * payload, the stream records themselves), which outlives the stream's 24 hours. This function
 * queues the new plants of every kept batch as the fan-out would have, then deletes the batch's
 * object; a batch it cannot queue either stays for the next replay. One command runs it (docs/webhooks.md):
 * `aws lambda invoke --function-name <ReplayStreamFailuresFunctionName> …`.
 */
import {
  DeleteObjectCommand,
  GetObjectCommand,
  paginateListObjectsV2,
  type S3Client,
} from '@aws-sdk/client-s3';
import {
  createLogger,
  type InvocationContext,
  invocationLoggers,
} from '../shared/platform/logger.ts';
import {
  type FanoutDependencies,
  queuePlantEventDeliveries,
} from '../shared/webhooks/queue-deliveries.ts';
import type { PlantStreamRecord } from '../shared/webhooks/stream-records.ts';

export interface ReplayDependencies extends FanoutDependencies {
  /** A client the SDK's paginator accepts (it checks for an S3Client). */
  readonly s3: S3Client;
  readonly bucketName: string;
  /** Keys per listed page: S3's most, 1,000, unless a test wants several pages. */
  readonly listPageSize?: number;
}

/** What a replay did: the function's answer to `aws lambda invoke`. */
export interface ReplaySummary {
  /** Kept batches queued and deleted. */
  readonly replayedBatches: number;
  readonly newPlants: number;
  /** Kept batches left for a later replay (SQS refused their deliveries, or unreadable). */
  readonly remainingBatches: number;
}

/** The log line of each replay, with its summary. */
export const replayLog = { replayed: 'replayed kept stream failures' } as const;

export function createHandler(dependencies: ReplayDependencies) {
  const loggerOf = invocationLoggers(
    dependencies.logger ?? createLogger({ service: 'replay-stream-failures' }),
  );
  return async (_event?: unknown, context?: InvocationContext): Promise<ReplaySummary> => {
    const logger = loggerOf(context);
    let replayedBatches = 0;
    let newPlants = 0;
    let remainingBatches = 0;
    for await (const key of keptBatchKeys(dependencies)) {
      const records = await readKeptRecords(dependencies, key);
      if (records === undefined) {
        logger.error('a kept stream failure is not an invocation record', { key });
        remainingBatches += 1;
        continue;
      }
      const outcome = await queuePlantEventDeliveries(records, dependencies, logger);
      newPlants += outcome.events['plant.created'];
      if (outcome.failedRecord !== undefined) {
        remainingBatches += 1;
        continue;
      }
      await dependencies.s3.send(
        new DeleteObjectCommand({ Bucket: dependencies.bucketName, Key: key }),
      );
      replayedBatches += 1;
    }
    const summary = { replayedBatches, newPlants, remainingBatches };
    logger.info(replayLog.replayed, summary);
    return summary;
  };
}

/** Every object of the bucket, page by page. */
async function* keptBatchKeys(dependencies: ReplayDependencies): AsyncGenerator<string> {
  const pages = paginateListObjectsV2(
    { client: dependencies.s3, pageSize: dependencies.listPageSize ?? 1000 },
    { Bucket: dependencies.bucketName },
  );
  for await (const page of pages) {
    for (const object of page.Contents ?? []) if (object.Key !== undefined) yield object.Key;
  }
}

/**
 * The stream records of one kept invocation record: its `payload` is the event Lambda invoked the
 * fan-out with (`{"Records": […]}`), as an object or as its JSON text.
 */
async function readKeptRecords(
  dependencies: ReplayDependencies,
  key: string,
): Promise<PlantStreamRecord[] | undefined> {
  const object = await dependencies.s3.send(
    new GetObjectCommand({ Bucket: dependencies.bucketName, Key: key }),
  );
  try {
    const record = JSON.parse((await object.Body?.transformToString('utf8')) ?? '') as {
      payload?: unknown;
    };
    const payload = (
      typeof record.payload === 'string' ? JSON.parse(record.payload) : record.payload
    ) as { Records?: unknown } | undefined;
    return Array.isArray(payload?.Records) ? (payload.Records as PlantStreamRecord[]) : undefined;
  } catch {
    return undefined;
  }
}
