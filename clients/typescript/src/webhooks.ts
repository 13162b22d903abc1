/**
 * Verifying the Plant Store's webhooks (Standard Webhooks, with its reference library) and
 * reading them with exact ids, typed by format and event.
 */
import { Webhook } from 'standardwebhooks';
import { parseExactJson } from './exact-json.ts';
import type { PlantEvent, StoredPlant, WebhookTestEvent } from './types.ts';

/**
 * A verified webhook: the id to tell repeats by, the plant's version, and what happened. Every
 * field but `traceparent` comes from what the signature covers (the `webhook-id`, the timestamp,
 * the body); the unsigned `plant-version` header is never read.
 */
export type VerifiedWebhook = {
  readonly webhookId: string;
  /** The plant's version after the event, from the signed `webhook-id` (`msg_…_v<version>`). */
  readonly version: number | undefined;
  /**
   * The W3C `traceparent` of this attempt, in the trace of the request that made the event: pass
   * it to a tracer to continue that trace. Unsigned, so for tracing only; absent when not sent.
   */
  readonly traceparent: string | undefined;
} & (
  | { readonly format: 'plant'; readonly plant: StoredPlant }
  | { readonly format: 'event'; readonly event: PlantEvent }
  /** A webhook endpoint's test event, which its owner asked for. */
  | { readonly format: 'test'; readonly event: WebhookTestEvent }
);

export class PlantStoreWebhooks {
  readonly #webhook: Webhook;

  /** @param secret the subscriber's `whsec_…` secret. */
  constructor(secret: string) {
    this.#webhook = new Webhook(secret);
  }

  /**
   * Verifies the signature over the raw body (and that it was signed in the last 5 minutes),
   * then reads it. @throws Error when the signature does not verify: answer 4xx and drop it.
   */
  verify(
    body: string,
    headers: Headers | Readonly<Record<string, string | string[] | undefined>>,
  ): VerifiedWebhook {
    const plain: Record<string, string> = {};
    const entries = headers instanceof Headers ? [...headers.entries()] : Object.entries(headers);
    for (const [name, value] of entries) {
      if (value !== undefined) plain[name.toLowerCase()] = [value].flat().join(', ');
    }
    this.#webhook.verify(body, plain);
    const webhookId = plain['webhook-id'] as string;
    const signedVersion = /_v(0|[1-9][0-9]{0,15})$/.exec(webhookId)?.[1];
    const version = signedVersion === undefined ? undefined : Number(signedVersion);
    const traceparent = /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/.test(plain.traceparent ?? '')
      ? plain.traceparent
      : undefined;
    const known = { webhookId, version, traceparent };
    const parsed = parseExactJson(body) as Record<string, unknown>;
    if (parsed.type === 'webhook.test') {
      return { ...known, format: 'test', event: parsed as unknown as WebhookTestEvent };
    }
    return 'type' in parsed && 'data' in parsed
      ? { ...known, format: 'event', event: parsed as unknown as PlantEvent }
      : { ...known, format: 'plant', plant: parsed as unknown as StoredPlant };
  }
}
