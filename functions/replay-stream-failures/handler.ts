/** Lambda entry of the stream-failure replay, configured once, at cold start. */
import { S3Client } from '@aws-sdk/client-s3';
import { createSqsClient } from '../shared/webhooks/delivery-queue.ts';
import { fanoutDependenciesOf } from '../webhook-endpoints/fanout-dependencies.ts';
import { readReplayConfig } from './config.ts';
import { createHandler } from './create-handler.ts';

const { s3Url, bucketName, ...fanout } = readReplayConfig(process.env);

/** The Lambda entry; the clients are created once per container. */
export const handler = createHandler({
  // Path-style addressing only where an emulator serves S3 (`sam local`).
  s3: new S3Client(s3Url === undefined ? {} : { endpoint: s3Url, forcePathStyle: true }),
  bucketName,
  ...fanoutDependenciesOf(fanout, createSqsClient()),
});
