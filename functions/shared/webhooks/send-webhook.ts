/**
 * Sending one webhook to one subscriber, signed per the Standard Webhooks specification with
 * its reference implementation (`standardwebhooks`), and the retry schedule: the delivery logic
 * the delivery function uses, deployed and under `npm start`.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIPv6, type LookupFunction } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { Logger } from '../platform/logger.ts';
import type { Webhook as PlantWebhook } from './plant-events.ts';

/** A subscriber: where its webhooks go and the `whsec_…` secret they are signed with. */
export interface Subscriber {
  readonly name: string;
  readonly url: string;
  readonly secret: string;
  /**
   * The secret before a rotation, while deliveries still carry its signature too (the header
   * then holds both, space-separated, as Standard Webhooks allows).
   */
  readonly previousSecret?: string;
}

/**
 * Seconds to wait before each retry: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (eight attempts
 * over about 27.6 hours); after the last failure the delivery is a dead letter.
 */
export const defaultRetrySchedule: readonly number[] = [5, 300, 1800, 7200, 18000, 36000, 36000];

/** A subscriber must answer 2xx within this many milliseconds for a delivery to count. */
export const deliveryTimeoutMilliseconds = 10_000;

export type SendOutcome =
  | { readonly delivered: true; readonly status: number }
  | { readonly delivered: false; readonly failure: string; readonly status?: number };

export interface SendOptions {
  readonly timeoutMilliseconds?: number;
  /** The attempt's time, which is signed (a receiver refuses stale timestamps). */
  readonly now?: Date;
  /** Cancels the attempt (`npm start` stopping). */
  readonly signal?: AbortSignal;
  /**
   * The address to connect to, checked before (`endpoint-url.ts`): the URL's host name is still
   * what TLS verifies and what the `Host` header says, but DNS is not asked again.
   */
  readonly address?: string;
}

/**
 * POSTs the webhook to the subscriber once: `Content-Type: application/json`, its payload as the
 * body, the `webhook-id` (which carries the plant's version), `webhook-timestamp` and
 * `webhook-signature` headers, signed afresh for this attempt, and the version again as
 * `plant-version`, unsigned, for receivers written before it was in the id. Delivered means a
 * 2xx status within the timeout; a redirect (never followed), any other status, a timeout, a
 * refused connection or a TLS error is a failure, described for the log and the dead letter
 * (never the secret).
 */
export async function sendWebhook(
  event: PlantWebhook,
  subscriber: Subscriber,
  options: SendOptions = {},
): Promise<SendOutcome> {
  const now = options.now ?? new Date();
  const signatures = [subscriber.secret, subscriber.previousSecret]
    .filter((secret): secret is string => secret !== undefined)
    .map((secret) => new Webhook(secret).sign(event.webhookId, now, event.payload));
  const body = Buffer.from(event.payload, 'utf8');
  try {
    const status = await post(
      new URL(subscriber.url),
      {
        'Content-Type': 'application/json',
        'Content-Length': String(body.byteLength),
        'User-Agent': 'plant-store-webhooks/1',
        'webhook-id': event.webhookId,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': signatures.join(' '),
        ...(event.version === undefined ? {} : { 'plant-version': String(event.version) }),
      },
      body,
      {
        signal: AbortSignal.any([
          AbortSignal.timeout(options.timeoutMilliseconds ?? deliveryTimeoutMilliseconds),
          ...(options.signal === undefined ? [] : [options.signal]),
        ]),
        ...(options.address === undefined ? {} : { address: options.address }),
      },
    );
    if (status >= 200 && status < 300) return { delivered: true, status };
    return { delivered: false, failure: `answered HTTP ${status}`, status };
  } catch (error) {
    return { delivered: false, failure: describeFailure(error) };
  }
}

/** One POST; resolves with the answer's status (its body is not read). */
function post(
  url: URL,
  headers: Record<string, string>,
  body: Buffer,
  options: { readonly signal: AbortSignal; readonly address?: string },
): Promise<number> {
  const { address } = options;
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const sent = request(url, {
      method: 'POST',
      headers,
      signal: options.signal,
      ...(address === undefined ? {} : { lookup: pinnedLookup(address) }),
    });
    sent.on('response', (response) => {
      // The answer's body is not needed; reading it would only hold the connection.
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    sent.on('error', reject);
    sent.end(body);
  });
}

/**
 * A resolver that answers every name with the one address checked before. It answers on a later
 * turn of the event loop, as a real resolver does: answered at once, a connect that fails at
 * once (an address the machine has no route to) emits its error before the HTTP client listens
 * for it, and the process dies of an unhandled 'error' event.
 */
function pinnedLookup(address: string): LookupFunction {
  const family = isIPv6(address) ? 6 : 4;
  return (_hostname, options, callback) => {
    setImmediate(() => {
      if (options.all) callback(null, [{ address, family }]);
      else callback(null, address, family);
    });
  };
}

/** A failure in a line: a timeout, or the network error's code (ECONNREFUSED, a TLS error…). */
function describeFailure(error: unknown): string {
  const failure = error as { name?: unknown; code?: unknown; message?: unknown; cause?: unknown };
  if (failure?.name === 'TimeoutError' || failure?.name === 'AbortError') {
    return 'no answer within the timeout';
  }
  if (typeof failure?.code === 'string') return `request failed: ${failure.code}`;
  return `request failed: ${typeof failure?.message === 'string' ? failure.message : String(error)}`;
}

/**
 * What follows a failed attempt (1-based): the seconds to wait before the next one, or
 * `undefined` when the schedule is spent and the delivery becomes a dead letter.
 */
export function retryDelaySeconds(
  failedAttempt: number,
  schedule: readonly number[] = defaultRetrySchedule,
): number | undefined {
  return schedule[failedAttempt - 1];
}

/** What follows an attempt: nothing more, a retry after a wait, or a dead letter. */
export type NextStep =
  | { readonly kind: 'delivered' }
  | { readonly kind: 'retry'; readonly delaySeconds: number; readonly failure: string }
  | { readonly kind: 'dead-letter'; readonly failure: string };

/**
 * The log messages and fields of the webhook outcomes. The deployed stage's metric filters read
 * them (`infra/plant-store-monitoring.ts` imports these names): rename one here and the metric
 * follows.
 */
export const webhookLog = {
  delivered: 'webhook delivered',
  retrying: 'webhook failed, retrying',
  deadLettered: 'webhook dead-lettered',
  /**
   * On a retry: how long the event will have waited, in seconds, when the next attempt is made
   * (a dead subscriber makes it grow with every attempt; the late-webhook alarm watches it).
   */
  waitedAtNextAttemptField: 'waitedSecondsAtNextAttempt',
  /**
   * What an attempt came to, on each of these lines (and on a message no longer sent):
   * `delivered`, `retrying`, `dead-lettered` or `not-sent`; the dashboard counts endpoints' by it.
   */
  outcomeField: 'outcome',
  subscriberField: 'subscriber',
} as const;

/** One delivery's identity for the log: the event, the subscriber, the attempt and its age. */
export interface DeliveryAttempt {
  readonly webhookId: string;
  readonly subscriber: string;
  /** From 1. */
  readonly attempt: number;
  /** When the event was first queued, in milliseconds since the epoch. */
  readonly queuedAt: number;
  /** When this attempt was due (a retry's scheduled time), if the delivery knows it. */
  readonly dueAt?: number;
}

/**
 * Decides what follows attempt `attempt` (1-based) of a delivery and logs it in the words of
 * {@link webhookLog}: one place for both the deployed and the local delivery.
 */
export function nextStepAfter(
  outcome: SendOutcome,
  delivery: DeliveryAttempt,
  logger: Logger,
  schedule: readonly number[] = defaultRetrySchedule,
  now: number = Date.now(),
): NextStep {
  // Named one by one: a delivery message also carries the payload, which is not logged.
  const { webhookId, subscriber, attempt, queuedAt, dueAt } = delivery;
  // How far behind its schedule the attempt was made (a retry is never made early).
  const fields = {
    webhookId,
    subscriber,
    attempt,
    lateMilliseconds: dueAt === undefined ? undefined : now - dueAt,
  };
  if (outcome.delivered) {
    logger.info(webhookLog.delivered, { ...fields, [webhookLog.outcomeField]: 'delivered' });
    return { kind: 'delivered' };
  }
  const delaySeconds = retryDelaySeconds(delivery.attempt, schedule);
  if (delaySeconds === undefined) {
    logger.error(webhookLog.deadLettered, {
      ...fields,
      [webhookLog.outcomeField]: 'dead-lettered',
      failure: outcome.failure,
    });
    return { kind: 'dead-letter', failure: outcome.failure };
  }
  logger.warn(webhookLog.retrying, {
    ...fields,
    [webhookLog.outcomeField]: 'retrying',
    failure: outcome.failure,
    retryInSeconds: delaySeconds,
    [webhookLog.waitedAtNextAttemptField]: Math.round((now - queuedAt) / 1000 + delaySeconds),
  });
  return { kind: 'retry', delaySeconds, failure: outcome.failure };
}
