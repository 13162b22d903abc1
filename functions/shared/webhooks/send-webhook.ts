/**
 * Sending one webhook, signed with the Standard Webhooks reference implementation, and the retry
 * schedule: the delivery logic, deployed and under `npm start`.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIPv6, type LookupFunction } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { Logger } from '../platform/logger.ts';
import { inSpan } from '../platform/spans.ts';
import { formatTraceparent } from '../platform/trace-context.ts';
import type { Webhook as PlantWebhook } from './plant-events.ts';

/** A subscriber: where its webhooks go and the `whsec_…` secret they are signed with. */
export interface Subscriber {
  readonly name: string;
  readonly url: string;
  readonly secret: string;
  /** The secret before a rotation, which signs too until it ends (Standard Webhooks allows it). */
  readonly previousSecret?: string;
}

/** Seconds before each retry: eight attempts over about 27.6 hours, then a dead letter. */
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
  /** The address checked before (`endpoint-url.ts`): TLS and `Host` still use the URL's name. */
  readonly address?: string;
}

/**
 * POSTs the webhook once, signed afresh (with the previous secret too, during a rotation), with
 * its version as `plant-version` for receivers older than the id's, and a `traceparent` below the
 * active span (its delivery's, in its event's trace). Only a 2xx within the timeout is delivered;
 * a redirect is never followed. A failure is described in a line.
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
  // The attempt is a client span below the delivery's, which the receiver continues; a delete's
  // event has no trace.
  const attributes = { 'http.request.method': 'POST', 'url.full': subscriber.url };
  const span = { kind: 'client', attributes } as const;
  try {
    const status = await inSpan('POST', span, async (attempt) => {
      const answered = await post(
        new URL(subscriber.url),
        {
          'Content-Type': 'application/json',
          'Content-Length': String(body.byteLength),
          'User-Agent': 'plant-store-webhooks/1',
          'webhook-id': event.webhookId,
          'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
          'webhook-signature': signatures.join(' '),
          ...(event.version === undefined ? {} : { 'plant-version': String(event.version) }),
          ...(attempt === undefined ? {} : { traceparent: formatTraceparent(attempt) }),
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
      attempt?.set({ 'http.response.status_code': answered });
      return answered;
    });
    if (status >= 200 && status < 300) return { delivered: true, status };
    return { delivered: false, failure: `answered HTTP ${status}`, status };
  } catch (error) {
    return { delivered: false, failure: describeFailure(error) };
  }
}

/** One POST; resolves with the response's status (its body is not read). */
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
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    sent.on('error', reject);
    sent.end(body);
  });
}

/**
 * A resolver answering the address checked before, on a later turn as a real one does: at once,
 * a connect failing at once would emit its error before the client listens for it.
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

/** What follows an attempt: nothing more, a retry after a wait, or a dead letter. */
export type NextStep =
  | { readonly kind: 'delivered' }
  | { readonly kind: 'retry'; readonly delaySeconds: number; readonly failure: string }
  | { readonly kind: 'dead-letter'; readonly failure: string };

/** The webhook outcomes' log words, which the stage's metric filters read. */
export const webhookLog = {
  delivered: 'webhook delivered',
  retrying: 'webhook failed, retrying',
  deadLettered: 'webhook dead-lettered',
  /** On a retry: the event's age at the next attempt, which the late-webhook alarm watches. */
  waitedAtNextAttemptField: 'waitedSecondsAtNextAttempt',
  /** `delivered`, `retrying`, `dead-lettered` or `not-sent`. */
  outcomeField: 'outcome',
  subscriberField: 'subscriber',
} as const;

/** One delivery's identity for the log: the event, the subscriber, the attempt and its age. */
export interface DeliveryAttempt {
  readonly webhookId: string;
  readonly subscriber: string;
  readonly attempt: number;
  /** When the event was first queued, in milliseconds since the epoch. */
  readonly queuedAt: number;
  /** When this attempt was due. */
  readonly dueAt: number;
}

/** What follows an attempt, logged in the words of {@link webhookLog}. */
export function nextStepAfter(
  outcome: SendOutcome,
  delivery: DeliveryAttempt,
  logger: Logger,
  schedule: readonly number[] = defaultRetrySchedule,
  now: number = Date.now(),
): NextStep {
  const { webhookId, subscriber, attempt, queuedAt, dueAt } = delivery;
  const fields = { webhookId, subscriber, attempt, lateMilliseconds: now - dueAt };
  if (outcome.delivered) {
    logger.info(webhookLog.delivered, { ...fields, [webhookLog.outcomeField]: 'delivered' });
    return { kind: 'delivered' };
  }
  // The wait before the next attempt; none left: a dead letter.
  const delaySeconds = schedule[attempt - 1];
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
