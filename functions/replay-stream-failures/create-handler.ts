/**
 * Replays the stream batches the fan-out gave up on, kept whole by Lambda in a bucket: queues each
 * as the fan-out would have, then deletes it. Scheduled every 5 minutes with backoff by age
 * ({@link replayDue}); invoked by hand (docs/webhooks.md) it replays every batch at once.
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
  readonly replayedBatches: number;
  readonly newPlants: number;
  /** Kept batches left for a later replay (SQS refused their deliveries, unreadable, not due). */
  readonly remainingBatches: number;
  /** The age of the oldest batch still kept, in whole minutes (0 when none is). */
  readonly oldestKeptMinutes: number;
}

/** The log line of each replay, with its summary. */
export const replayLog = {
  replayed: 'replayed kept stream failures',
  oldestKeptField: 'oldestKeptMinutes',
} as const;

/** How often the schedule runs the replay, in minutes. */
export const replayPeriodMinutes = 5;

/** Whether a scheduled run replays a batch this old: at 5, 10, 20 … 160 minutes, then 4-hourly. */
export function replayDue(ageMinutes: number): boolean {
  const steps = [5, 10, 20, 40, 80, 160];
  const inRun = (step: number) => ageMinutes >= step && ageMinutes < step + replayPeriodMinutes;
  if (steps.some(inRun)) return true;
  return ageMinutes >= 240 && (ageMinutes - 240) % 240 < replayPeriodMinutes;
}

/** Whether the invocation is the schedule's (EventBridge's scheduled event). */
function isScheduled(event: unknown): boolean {
  return (event as { 'detail-type'?: unknown } | undefined)?.['detail-type'] === 'Scheduled Event';
}

export function createHandler(dependencies: ReplayDependencies) {
  const loggerOf = invocationLoggers(
    dependencies.logger ?? createLogger({ service: 'replay-stream-failures' }),
  );
  const now = dependencies.now ?? Date.now;
  return async (event?: unknown, context?: InvocationContext): Promise<ReplaySummary> => {
    const logger = loggerOf(context);
    const scheduled = isScheduled(event);
    let replayedBatches = 0;
    let newPlants = 0;
    let remainingBatches = 0;
    let oldestKeptMinutes = 0;
    for await (const { key, keptAt } of keptBatches(dependencies)) {
      const ageMinutes = Math.floor((now() - keptAt) / 60_000);
      const keep = () => {
        remainingBatches += 1;
        oldestKeptMinutes = Math.max(oldestKeptMinutes, ageMinutes);
      };
      if (scheduled && !replayDue(ageMinutes)) {
        keep();
        continue;
      }
      const records = await readKeptRecords(dependencies, key);
      if (records === undefined) {
        logger.error('a kept stream failure is not an invocation record', { key });
        keep();
        continue;
      }
      const outcome = await queuePlantEventDeliveries(records, dependencies, logger);
      newPlants += outcome.events['plant.created'];
      if (outcome.failedRecord !== undefined) {
        keep();
        continue;
      }
      await dependencies.s3.send(
        new DeleteObjectCommand({ Bucket: dependencies.bucketName, Key: key }),
      );
      replayedBatches += 1;
    }
    const summary = { replayedBatches, newPlants, remainingBatches, oldestKeptMinutes };
    logger.info(replayLog.replayed, summary);
    return summary;
  };
}

/** Every object of the bucket and when it was written, page by page. */
async function* keptBatches(
  dependencies: ReplayDependencies,
): AsyncGenerator<{ key: string; keptAt: number }> {
  const pages = paginateListObjectsV2(
    { client: dependencies.s3, pageSize: dependencies.listPageSize ?? 1000 },
    { Bucket: dependencies.bucketName },
  );
  for await (const page of pages) {
    for (const object of page.Contents ?? []) {
      if (object.Key === undefined) continue;
      yield { key: object.Key, keptAt: object.LastModified?.getTime() ?? 0 };
    }
  }
}

/** The stream records of a kept invocation record: its `payload` (an object or JSON text). */
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
