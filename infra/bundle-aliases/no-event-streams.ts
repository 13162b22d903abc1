/**
 * `@smithy/core/event-streams` for the Lambda bundles (see `bundleSettings.alias`): DynamoDB has
 * no event-stream operations, so the SDK's protocol never loads the real module (it imports it
 * on demand, only for such operations). Replacing it keeps ~15 KB of codec out of every bundle
 * and fails loudly should a future client ever need it.
 */

function failWithoutEventStreams(): never {
  throw new Error(
    'Event streams are not bundled in the Plant Store functions (infra/bundling.ts).',
  );
}

/** Stands in for the SDK's event-stream serde; never constructed for DynamoDB. */
export class EventStreamSerde {
  constructor() {
    failWithoutEventStreams();
  }
}

/** Stands in for the SDK's event-stream marshaller factory; never called for DynamoDB. */
export function eventStreamSerdeProvider(): never {
  return failWithoutEventStreams();
}

/**
 * Stands in for the client config step that attaches the event-stream marshaller (S3 resolves
 * it when its client is made, for SelectObjectContent): the replay function's S3 calls stream
 * nothing, so the config is left without one.
 */
export function resolveEventStreamSerdeConfig<Config>(input: Config): Config {
  return input;
}
