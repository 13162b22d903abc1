/**
 * `client.webhookEndpoints`: the client's own webhook endpoints (scope `webhooks/manage`):
 * register one and get its secret, list, read, change, delete, read or rotate the secret, send a
 * test event, see the attempts, recover what it missed. Every call goes through the client's
 * one sender: the same retries, errors and token. Create, rotate, test and recover each send an
 * `Idempotency-Key` (a new UUID, or the caller's), which the sender's retries keep: a retry after
 * a `503` answers what the first request did, and never makes a second endpoint.
 */
import type {
  CreatedWebhookEndpoint,
  DeliveryAttempt,
  NewWebhookEndpoint,
  WebhookEndpoint,
  WebhookEndpointPatch,
} from './types.ts';

/** A call's `Idempotency-Key`: the caller's, to retry across restarts, or a new one. */
export interface KeyedCallOptions {
  readonly idempotencyKey?: string;
}

const keyed = (options: KeyedCallOptions) => ({
  'Idempotency-Key': options.idempotencyKey ?? globalThis.crypto.randomUUID(),
});

/** One call as the client sends it. */
export interface EndpointCall {
  readonly method: string;
  readonly path: string;
  readonly body?: unknown;
  readonly contentType?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** What the endpoints need of the client: its sender, its pager and its JSON reader. */
export interface EndpointTransport {
  send(call: EndpointCall): Promise<Response>;
  pages<Item>(path: string): AsyncIterable<Item>;
  json(response: Response): Promise<unknown>;
}

export class WebhookEndpoints {
  readonly #transport: EndpointTransport;
  /** The last `ETag` seen of each endpoint, by id. */
  readonly #etags = new Map<string, string>();

  constructor(transport: EndpointTransport) {
    this.#transport = transport;
  }

  /** Registers an endpoint; the answer holds its secret (`whsec_…`), shown only here and by `secret`. */
  async create(
    endpoint: NewWebhookEndpoint,
    options: KeyedCallOptions = {},
  ): Promise<CreatedWebhookEndpoint> {
    const response = await this.#transport.send({
      method: 'POST',
      path: '/webhook-endpoints',
      body: endpoint,
      headers: keyed(options),
    });
    return (await this.#transport.json(response)) as CreatedWebhookEndpoint;
  }

  /** Every endpoint of the client, page by page, as one async iterable. */
  list(options: { readonly limit?: number } = {}): AsyncIterable<WebhookEndpoint> {
    return this.#transport.pages(`/webhook-endpoints?limit=${options.limit ?? 100}`);
  }

  /** One endpoint. @throws PlantStoreError 404/40402 when the client has none with this id. */
  async get(id: string): Promise<WebhookEndpoint> {
    const response = await this.#transport.send({ method: 'GET', path: this.#path(id) });
    this.#keepEtag(id, response);
    return (await this.#transport.json(response)) as WebhookEndpoint;
  }

  /**
   * Changes what `patch` names (`description: null` removes it; `enabled` turns deliveries off
   * or on), if the endpoint is still the version this client last read; any version when it has
   * read none. @throws PlantStoreError 412/41200 when another change came first.
   */
  async update(id: string, patch: WebhookEndpointPatch): Promise<WebhookEndpoint> {
    const response = await this.#transport.send({
      method: 'PATCH',
      path: this.#path(id),
      body: patch,
      contentType: 'application/merge-patch+json',
      headers: { 'If-Match': this.#etags.get(id) ?? '*' },
    });
    this.#keepEtag(id, response);
    return (await this.#transport.json(response)) as WebhookEndpoint;
  }

  /** Deletes an endpoint: nothing is sent to it afterwards. */
  async delete(id: string): Promise<void> {
    await this.#transport.send({ method: 'DELETE', path: this.#path(id) });
    this.#etags.delete(id);
  }

  /** The endpoint's current signing secret. */
  async secret(id: string): Promise<string> {
    const response = await this.#transport.send({
      method: 'GET',
      path: `${this.#path(id)}/secret`,
    });
    return ((await this.#transport.json(response)) as { secret: string }).secret;
  }

  /**
   * A new secret; for `overlapSeconds` (24 hours unless given) deliveries carry the old one's
   * signature too. `{ overlapSeconds: 0 }` revokes the old secret at once (one that leaked).
   */
  async rotateSecret(
    id: string,
    options: { readonly overlapSeconds?: number } & KeyedCallOptions = {},
  ): Promise<string> {
    const response = await this.#transport.send({
      method: 'POST',
      path: `${this.#path(id)}/secret/rotate`,
      headers: keyed(options),
      ...(options.overlapSeconds === undefined
        ? {}
        : { body: { overlapSeconds: options.overlapSeconds } }),
    });
    return ((await this.#transport.json(response)) as { secret: string }).secret;
  }

  /** Sends a signed `webhook.test` event; resolves with its event id (`webhook-id`). */
  async test(id: string, options: KeyedCallOptions = {}): Promise<string> {
    const response = await this.#transport.send({
      method: 'POST',
      path: `${this.#path(id)}/test`,
      headers: keyed(options),
    });
    return ((await this.#transport.json(response)) as { eventId: string }).eventId;
  }

  /** Every attempt at the endpoint of the last 7 days, newest first. */
  attempts(id: string, options: { readonly limit?: number } = {}): AsyncIterable<DeliveryAttempt> {
    return this.#transport.pages(`${this.#path(id)}/attempts?limit=${options.limit ?? 100}`);
  }

  /**
   * Sends again, once each, every event since `since` (at most 7 days back) the endpoint has not
   * had delivered and has no delivery under way; resolves with how many. The API queues 1,000 a
   * call: while it says more were missed, this calls again (waiting out a 429's `Retry-After`).
   * Each call has a key of its own. @throws PlantStoreError 409/40900 while disabled.
   */
  async recover(id: string, since: Date | string): Promise<number> {
    let events = 0;
    for (;;) {
      const response = await this.#transport.send({
        method: 'POST',
        path: `${this.#path(id)}/recover`,
        body: { since: since instanceof Date ? since.toISOString() : since },
        headers: keyed({}),
      });
      const queued = (await this.#transport.json(response)) as { events: number; more: boolean };
      events += queued.events;
      if (!queued.more) return events;
    }
  }

  #path(id: string): string {
    return `/webhook-endpoints/${encodeURIComponent(id)}`;
  }

  #keepEtag(id: string, response: Response): void {
    const etag = response.headers.get('etag');
    if (etag !== null) this.#etags.set(id, etag);
  }
}
