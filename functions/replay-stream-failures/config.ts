/**
 * The replay's settings: the fan-out's (`DELIVERY_QUEUE_URL`, `SUBSCRIPTIONS`),
 * `STREAM_FAILURES_BUCKET`, where the kept batches are, and `S3_ENDPOINT` (optional; empty means
 * AWS's, and `sam local` points it at an emulator).
 */
import { readEnvironment } from '../shared/platform/environment.ts';
import { readFanoutSettings } from '../webhook-endpoints/fanout-dependencies.ts';

/** The configuration from the environment: the fan-out's, and the bucket; checked at cold start. */
export function readReplayConfig(environment: NodeJS.ProcessEnv) {
  const read = readEnvironment(environment, 'replay-stream-failures');
  const config = {
    ...readFanoutSettings(read),
    bucketName: read.string('STREAM_FAILURES_BUCKET'),
    s3Endpoint: read.optional('S3_ENDPOINT'),
  };
  read.check();
  return config;
}
