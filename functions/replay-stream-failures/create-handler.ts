/**
 * Replays the stream batches the fan-out gave up on, kept whole by Lambda in a bucket: queues each
 * as the fan-out would have, then deletes it. Scheduled every 5 minutes with backoff by age
 * ({@link replayDue}); invoked by hand (docs/webhooks.md) it replays every batch at once. A batch
 * keeps its progress in its tags ({@link BatchProgress}): a replay resumes after the last record it
 * queued, and a record that fails {@link setAsideAfterFailures} replays in a row is set aside under
 * `set-aside/`, where it pages, and the rest of its batch goes on. Every run that ends logs its
 * summary; one that cannot list the bucket throws and logs none, which the alarm pages on too.
 */
import {
  DeleteObjectCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  PutObjectCommand,
  PutObjectTaggingCommand,
  paginateListObjectsV2,
  type S3Client,
} from '@aws-sdk/client-s3';
import { backgroundMarginMilliseconds, budgeted } from '../shared/platform/invocation-budget.ts';
import {
  createLogger,
  type InvocationContext,
  invocationLoggers,
  type Logger,
} from '../shared/platform/logger.ts';
import {
  type FanoutDependencies,
  fanoutLog,
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

/** Replays in a row that fail at one record before it is set aside: about 4 hours' worth. */
export const setAsideAfterFailures = 7;

/** Where a record set aside is kept: replayed by hand only (docs/webhooks.md). */
export const setAsidePrefix = 'set-aside/';

/**
 * Whether a scheduled run replays a batch this old, last tried at `triedAtAgeMinutes` (if ever):
 * when a replay point (5, 10, 20, 40, 80, 160 minutes, then every 4 hours) has passed since. A
 * late or missed run therefore skips no point: the next one makes it up.
 */
export function replayDue(ageMinutes: number, triedAtAgeMinutes?: number): boolean {
  const pointsPassed = (age: number) => {
    const early = [5, 10, 20, 40, 80, 160].filter((point) => age >= point).length;
    return early + (age >= 240 ? Math.floor((age - 240) / 240) + 1 : 0);
  };
  const passedWhenTried = triedAtAgeMinutes === undefined ? 0 : pointsPassed(triedAtAgeMinutes);
  return pointsPassed(ageMinutes) > passedWhenTried;
}

/** A kept batch's progress, in its object's tags (S3 keeps up to 10 a object). */
export interface BatchProgress {
  /** When a replay last tried it, in milliseconds since the epoch. */
  readonly triedAt?: number;
  /** The sequence number of the first record not yet queued. */
  readonly resumeAt?: string;
  /** Replays in a row that failed at `resumeAt`. */
  readonly failures: number;
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
  return budgeted(
    backgroundMarginMilliseconds,
    async (event?: unknown, context?: InvocationContext): Promise<ReplaySummary> => {
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
        // A record set aside waits for a person, and is counted as kept until then: the replay's
        // alarm goes on paging for it (its age), not only once.
        if (scheduled && key.startsWith(setAsidePrefix)) {
          keep();
          continue;
        }
        try {
          const progress = await readProgress(dependencies, key);
          const triedAtAge =
            progress.triedAt === undefined
              ? undefined
              : Math.floor((progress.triedAt - keptAt) / 60_000);
          if (scheduled && !replayDue(ageMinutes, triedAtAge)) {
            keep();
            continue;
          }
          const outcome = await replayBatch(dependencies, key, progress, logger, now);
          newPlants += outcome.newPlants;
          if (outcome.done) replayedBatches += 1;
          else keep();
        } catch (error) {
          // One batch S3 fails on is kept for the next run, and holds back no other.
          logger.error('could not replay a kept stream batch', { key, error });
          keep();
        }
      }
      const summary = { replayedBatches, newPlants, remainingBatches, oldestKeptMinutes };
      logger.info(replayLog.replayed, summary);
      return summary;
    },
  );
}

/** Queues a batch's records from where it stopped; deletes it, or records how far it got. */
async function replayBatch(
  dependencies: ReplayDependencies,
  key: string,
  progress: BatchProgress,
  logger: Logger,
  now: () => number,
): Promise<{ done: boolean; newPlants: number }> {
  const records = await readKeptRecords(dependencies, key);
  if (records === undefined) {
    logger.error('a kept stream failure is not an invocation record', { key });
    return { done: false, newPlants: 0 };
  }
  const resumeIndex = records.findIndex(
    (record) =>
      progress.resumeAt !== undefined && record.dynamodb?.SequenceNumber === progress.resumeAt,
  );
  let start = Math.max(resumeIndex, 0);
  let newPlants = 0;
  let failuresSoFar = progress.failures;
  while (start < records.length) {
    const outcome = await queuePlantEventDeliveries(records.slice(start), dependencies, logger);
    newPlants += outcome.events['plant.created'];
    const failed = outcome.failedRecord;
    if (failed === undefined) break;
    const resumeAt = failed.dynamodb?.SequenceNumber;
    // Only a record's own sends count against it: a store outage before any send does not.
    const counted = outcome.failedBeforeSending !== true && resumeAt !== undefined;
    const failures = !counted
      ? failuresSoFar
      : resumeAt === progress.resumeAt
        ? failuresSoFar + 1
        : 1;
    // A record set aside already is never set aside again: it waits for a person.
    if (failures < setAsideAfterFailures || key.startsWith(setAsidePrefix)) {
      await writeProgress(dependencies, key, { triedAt: now(), resumeAt, failures });
      return { done: false, newPlants };
    }
    // Failing this long is not an outage that passes: set it aside, and go on after it.
    await setAside(dependencies, key, failed, records.indexOf(failed), logger);
    start = records.indexOf(failed) + 1;
    failuresSoFar = 0;
  }
  await dependencies.s3.send(new DeleteObjectCommand(objectOf(dependencies, key)));
  return { done: true, newPlants };
}

/** Keeps `record` alone under {@link setAsidePrefix}, and pages (`Webhooks-Event-Refused`). */
async function setAside(
  dependencies: ReplayDependencies,
  key: string,
  record: PlantStreamRecord,
  index: number,
  logger: Logger,
): Promise<void> {
  const setAsideKey = `${setAsidePrefix}${key}-${record.dynamodb?.SequenceNumber ?? `record-${index}`}`;
  await dependencies.s3.send(
    new PutObjectCommand({
      ...objectOf(dependencies, setAsideKey),
      Body: JSON.stringify({ payload: { Records: [record] } }),
      ContentType: 'application/json',
    }),
  );
  logger.error(fanoutLog.refused, {
    [fanoutLog.refusedField]: 1,
    eventID: record.eventID,
    key: setAsideKey,
    failures: setAsideAfterFailures,
  });
}

/** A kept batch's object in the bucket. */
function objectOf(dependencies: ReplayDependencies, key: string) {
  return { Bucket: dependencies.bucketName, Key: key };
}

/** A batch's progress, from its tags. */
async function readProgress(dependencies: ReplayDependencies, key: string): Promise<BatchProgress> {
  const tagging = new GetObjectTaggingCommand(objectOf(dependencies, key));
  const { TagSet = [] } = await dependencies.s3.send(tagging);
  const tag = (name: string) => TagSet.find((one) => one.Key === name)?.Value;
  const triedAt = Number(tag('triedAt'));
  return {
    ...(Number.isFinite(triedAt) && triedAt > 0 ? { triedAt } : {}),
    ...(tag('resumeAt') === undefined ? {} : { resumeAt: tag('resumeAt') }),
    failures: Number(tag('failures') ?? 0) || 0,
  };
}

async function writeProgress(
  dependencies: ReplayDependencies,
  key: string,
  progress: BatchProgress,
): Promise<void> {
  const tags = Object.entries(progress)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => ({ Key: name, Value: String(value) }));
  const tagging = { ...objectOf(dependencies, key), Tagging: { TagSet: tags } };
  await dependencies.s3.send(new PutObjectTaggingCommand(tagging));
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
  const object = await dependencies.s3.send(new GetObjectCommand(objectOf(dependencies, key)));
  try {
    const text = (await object.Body?.transformToString('utf8')) ?? '';
    const record = JSON.parse(text) as { payload?: unknown };
    const payload = (
      typeof record.payload === 'string' ? JSON.parse(record.payload) : record.payload
    ) as { Records?: unknown } | undefined;
    return Array.isArray(payload?.Records) ? (payload.Records as PlantStreamRecord[]) : undefined;
  } catch {
    return undefined;
  }
}
