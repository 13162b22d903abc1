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
