/**
 * The replay's settings: the fan-out's, `STREAM_FAILURES_BUCKET` (where the kept batches are) and
 * `S3_ENDPOINT` (optional; empty means AWS's, and `sam local` points it at an emulator).
 */
import { optional, readConfiguration, required } from '../shared/platform/configuration.ts';
import { fanoutSettingsOf, fanoutVariables } from '../webhook-endpoints/fanout-dependencies.ts';

/** The configuration from the environment: the fan-out's, and the bucket; checked at cold start. */
export function readReplayConfig(environment: NodeJS.ProcessEnv) {
  const variables = readConfiguration(
    'replay-stream-failures',
    { ...fanoutVariables(environment), STREAM_FAILURES_BUCKET: required(), S3_ENDPOINT: optional },
    environment,
  );
  return {
    ...fanoutSettingsOf(variables),
    bucketName: variables.STREAM_FAILURES_BUCKET,
    s3Url: variables.S3_ENDPOINT,
  };
}
