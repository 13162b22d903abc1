/**
 * `@smithy/core/event-streams` for the bundles: no operation the functions call streams events,
 * so ~15 KB of codec stays out, and a future one that did would fail loudly.
 */

function failWithoutEventStreams(): never {
  throw new Error('Event streams are not bundled in the functions (infra/bundling.ts).');
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

/** The client config step that attaches the marshaller (S3's); the replay's calls stream nothing. */
export function resolveEventStreamSerdeConfig<Config>(input: Config): Config {
  return input;
}
