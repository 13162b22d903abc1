/**
 * Delivering to endpoints: each endpoint read (consistently) once an invocation, the event's
 * delivery claimed (so a `recover` never doubles one), the URL checked again and the connection
 * pinned to the address checked, signed (with the previous secret for 24 h after a rotation).
 * Every attempt is logged for its owner; 5 failing days disable the endpoint.
 */
import { retryWhileUnavailable } from '../shared/platform/dynamodb.ts';
import type { Logger } from '../shared/platform/logger.ts';
import { activeSpan } from '../shared/platform/spans.ts';
import type {
  DeliveryTarget,
  DeliveryTargets,
  TargetResolution,
} from '../shared/webhooks/attempt-delivery.ts';
import type { DeliveryMessage } from '../shared/webhooks/delivery-message.ts';
import { type SendOutcome, sendWebhook } from '../shared/webhooks/send-webhook.ts';
import { type EndpointRecord, failingLimitMilliseconds } from './endpoint.ts';
import { type EndpointStores, readEndpoint, recordEndpointHealth } from './endpoint-store.ts';
import { checkEndpointUrl, EndpointUrlError, type EndpointUrlPolicy } from './endpoint-url.ts';
import type { SecretBox } from './secret-box.ts';
import {
  claimDelivery,
  type DeliveryAttemptRecord,
  endDelivery,
  recordAttempt,
} from './webhook-log.ts';

export interface EndpointDeliveryDependencies {
  readonly stores: EndpointStores;
  readonly secretBox: Pick<SecretBox, 'open'>;
  readonly urlPolicy: EndpointUrlPolicy;
  readonly now?: () => number;
  /** How long every attempt must have failed before the endpoint is disabled. @default 5 days */
  readonly failingLimitMilliseconds?: number;
}

/** The log line of an endpoint disabled for failing, which the EndpointsDisabled metric counts. */
export const endpointLog = { disabled: 'webhook endpoint disabled' } as const;

/**
 * How many opened secrets a container keeps, by sealed form (new at every rotation; a revoked one
 * is never asked for again, as each delivery reads the endpoint's current secrets), the oldest let
 * go past this many: a `kms:` secret, sealed before the data key, costs a KMS call to open.
 */
export const openedSecretsKept = 50_000;

/** The targets of endpoint messages, per invocation's logger; each secret version opened once. */
export function endpointTargets(
  dependencies: EndpointDeliveryDependencies,
): (logger: Logger) => DeliveryTargets {
  const now = dependencies.now ?? Date.now;
  const { stores } = dependencies;
  const opened = new Map<string, string>();
  const open = async (sealed: string, endpointId: string) => {
    const cached = opened.get(sealed);
    if (cached !== undefined) return cached;
    const value = await dependencies.secretBox.open(sealed, endpointId);
    if (opened.size >= openedSecretsKept) opened.delete(opened.keys().next().value as string);
    opened.set(sealed, value);
    return value;
  };

  const target = (record: EndpointRecord, logger: Logger): DeliveryTarget => ({
    attempt: async (message, options) => {
      let address: string | undefined;
      try {
        address = (await checkEndpointUrl(record.url, dependencies.urlPolicy)).addresses[0];
      } catch (error) {
        if (!(error instanceof EndpointUrlError)) throw error;
        return { delivered: false, failure: `refused: ${error.message}` };
      }
      const previousSecret =
        record.previousSecret !== undefined && (record.previousSecretUntil ?? 0) > now()
          ? await open(record.previousSecret, record.id)
          : undefined;
      const secret = await open(record.secret, record.id);
      const subscriber = { name: message.subscriber, url: record.url, secret, previousSecret };
      const pinned = address === undefined ? options : { ...options, address };
      return sendWebhook(message, subscriber, pinned);
    },
    record: async (message, outcome, timing, next) => {
      // Retried through a pause of the store: else the claim stays pending (a 2xx, longest).
      await retryWhileUnavailable(
        () => recordAttempt(record.id, attemptRecordOf(message, outcome, timing), stores),
        outcome.delivered ? 6 : 3,
      );
      if (next === 'dead-letter' && message.endpoint?.type !== 'webhook.test') {
        await retryWhileUnavailable(() =>
          endDelivery(record.id, message.webhookId, deliveryIdOf(message), stores),
        );
      }
      // The endpoints' clock, not the attempt's: a test moves it days ahead.
      const at = now();
      const reason = outcome.delivered
        ? ''
        : `Every delivery attempt failed for 5 days (since ${new Date(record.failingSince ?? at).toISOString()}); the last one: ${outcome.failure}.`;
      const health = await recordEndpointHealth(
        record,
        { delivered: outcome.delivered, at, reason },
        dependencies.failingLimitMilliseconds ?? failingLimitMilliseconds,
        stores,
      );
      if (health === 'disabled') {
        logger.warn(endpointLog.disabled, { endpointId: record.id, reason });
      }
    },
  });

  return (logger) => {
    // A bundle's deliveries share one read of their endpoint: one read a bundle, not a delivery.
    const reads = new Map<string, ReturnType<typeof readEndpoint>>();
    return {
      resolve: async (message): Promise<TargetResolution> => {
        const address = message.endpoint;
        if (address === undefined) return { unknown: true };
        const key = `${address.owner}/${address.id}`;
        const read = reads.get(key) ?? readEndpoint(address.owner, address.id, stores);
        reads.set(key, read);
        const record = await read;
        if (record === undefined) return { done: 'the endpoint was deleted' };
        // A test event is sent whatever the endpoint's state: its owner asked for it.
        if (address.type === 'webhook.test') return { target: target(record, logger) };
        const deliveryId = deliveryIdOf(message);
        const notSent = async (reason: string) => {
          await endDelivery(record.id, message.webhookId, deliveryId, stores);
          return { done: reason };
        };
        if (!record.enabled) return notSent('the endpoint is disabled');
        if (!(record.events as readonly string[]).includes(address.type)) {
          return notSent(`the endpoint no longer hears of ${address.type}`);
        }
        // A failing endpoint (one that hangs, say) takes its first attempts to the retry queue,
        // whose functions are its own and few: it never holds up the others' first attempts.
        if (record.failingSince !== undefined && message.attempt === 1 && !message.sidelined) {
          return { sideline: true };
        }
        const { webhookId, attempt } = message;
        const claim = await claimDelivery(record.id, webhookId, deliveryId, now(), stores, {
          attempt,
        });
        if (claim === 'delivered') return { done: 'the endpoint has had this event' };
        if (claim === 'claimed') return { target: target(record, logger) };
        // A recover's claim, or a copy's attempt, holds briefly: this may be the event's only message.
        if (claim.pendingUntil - now() <= shortHoldMilliseconds) {
          return { retryAt: claim.pendingUntil + 1_000 };
        }
        return { done: 'another delivery of this event is under way' };
      },
    };
  };
}

/** A claim held this long at most is a recover's, waiting for its first attempt. */
const shortHoldMilliseconds = 15 * 60 * 1000;

/** A message's delivery id; one queued before deliveries had ids is its event's own. */
function deliveryIdOf(message: DeliveryMessage): string {
  return message.deliveryId ?? `event:${message.webhookId}`;
}

function attemptRecordOf(
  message: DeliveryMessage,
  outcome: SendOutcome,
  timing: { readonly startedAt: number; readonly durationMilliseconds: number },
): DeliveryAttemptRecord {
  return {
    eventId: message.webhookId,
    type: (message.endpoint?.type ?? 'webhook.test') as DeliveryAttemptRecord['type'],
    attempt: message.attempt,
    outcome: outcome.delivered ? 'delivered' : 'failed',
    responseStatus: outcome.status,
    durationMilliseconds: Math.round(timing.durationMilliseconds),
    ...(outcome.delivered ? {} : { failure: outcome.failure }),
    attemptedAt: new Date(timing.startedAt).toISOString(),
    traceId: activeSpan()?.traceId,
  };
}
