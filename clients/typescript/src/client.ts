/**
 * `PlantStoreClient`: every operation of the Plant Store API (the webhook endpoints' under
 * `webhookEndpoints`), for browsers and Node.js (only
 * `fetch`, no Node.js module). Ids are `bigint` both ways; `429` and `503` (and a keyed request's
 * `409` under way) are retried, never sooner than `Retry-After`; the last `ETag` seen of each plant is kept, so a change says which
 * version it changes; every failure is a `PlantStoreError`, an unreachable API included.
 */
import { parseExactJson, stringifyExactJson } from './exact-json.ts';
import type {
  ErrorBody,
  NewPlant,
  Plant,
  PlantPatch,
  PlantReplacement,
  StoredPlant,
} from './types.ts';
import { WebhookEndpoints } from './webhook-endpoints.ts';

export interface PlantStoreClientOptions {
  /** The API's base URL: `http://127.0.0.1:3000`, or a stage's URL without `/plants`. */
  readonly baseUrl: string;
  /** A bearer token with the operations' scopes, or a function that gets a current one. */
  readonly token: string | (() => string | Promise<string>);
  /** Tries after a `429` or `503` before the error is thrown. @default 3 */
  readonly maxRetries?: number;
  /**
   * The longest wait before a retry, in milliseconds; an answer asking for a longer one is
   * thrown instead. @default 30000
   */
  readonly maxRetryDelayMilliseconds?: number;
  /** @default globalThis.fetch */
  readonly fetch?: typeof fetch;
}

/** Whether `body` is the API's Error body: `{error: <integer>, message: <string>}`. */
function isErrorBody(body: unknown): body is ErrorBody {
  const { error, message } = (body ?? {}) as Partial<Record<keyof ErrorBody, unknown>>;
  return (
    typeof body === 'object' &&
    body !== null &&
    !Array.isArray(body) &&
    Number.isInteger(typeof error === 'bigint' ? Number(error) : error) &&
    typeof message === 'string'
  );
}

/**
 * A failure: what the API answered (its status, code, message and request id), or, with status
 * 0, that no answer could be had (unreachable, refused by the browser, the token not to be had).
 */
export class PlantStoreError extends Error {
  override readonly name = 'PlantStoreError';
  /** The HTTP status; 0 when no answer could be read (offline, or refused by the browser: CORS). */
  readonly status: number;
  /**
   * The API's error code (`40401`, `41200`…); the status's (`status` × 100) when the answer had no
   * Error body; 0 when there was no answer.
   */
  readonly error: number;
  /** The request id to quote when reporting a problem (`x-amzn-RequestId`). */
  readonly requestId: string | undefined;

  /**
   * `body` is used only if it is the API's Error body (an integer `error` and a string `message`);
   * otherwise the error is the status's code (412 → 41200) and the message a generic one.
   */
  constructor(
    status: number,
    body: unknown,
    requestId: string | undefined,
    options?: ErrorOptions,
  ) {
    const errorBody = isErrorBody(body) ? body : undefined;
    super(errorBody?.message ?? `The Plant Store answered HTTP ${status}.`, options);
    this.status = status;
    this.error = errorBody?.error ?? status * 100;
    this.requestId = requestId;
  }
}

interface Call {
  readonly method: string;
  readonly path: string;
  readonly body?: unknown;
  readonly contentType?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export class PlantStoreClient {
  readonly #baseUrl: string;
  readonly #options: PlantStoreClientOptions;
  readonly #fetch: typeof fetch;
  /** The last `ETag` seen of each plant, by id. */
  readonly #etags = new Map<bigint, string>();

  /** The client's own webhook endpoints (a token with `webhooks/manage`). */
  readonly webhookEndpoints: WebhookEndpoints;

  constructor(options: PlantStoreClientOptions) {
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#options = options;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.webhookEndpoints = new WebhookEndpoints({
      send: (call) => this.#send(call),
      pages: (path) => this.#pages(path),
      json: readJson,
    });
  }

  /** Adds a plant; an identical repeat is a success too (creates are idempotent). */
  async create(plant: NewPlant): Promise<Plant> {
    const response = await this.#send({ method: 'POST', path: '/plants', body: plant });
    this.#keepEtag(plant.id, response);
    return (await readJson(response)) as Plant;
  }

  /** Reads a plant. @throws PlantStoreError 404/40401 when there is none. */
  async get(id: bigint): Promise<StoredPlant> {
    const response = await this.#send({ method: 'GET', path: `/plants/${id}` });
    this.#keepEtag(id, response);
    return (await readJson(response)) as StoredPlant;
  }

  /**
   * Every plant, page by page (following the `Link` header), as one async iterable. A `next` link
   * is followed only on the client's own origin and under its base path: the token goes nowhere
   * else. @throws PlantStoreError for a link anywhere else, having sent nothing there.
   */
  list(options: { readonly limit?: number } = {}): AsyncIterable<StoredPlant> {
    return this.#pages(`/plants?limit=${options.limit ?? 100}`);
  }

  /** The items of every page from `path` on, following each `next` link on this API only. */
  async *#pages<Item>(path: string): AsyncIterable<Item> {
    let next: string | undefined = `${this.#baseUrl}${path}`;
    while (next !== undefined) {
      const response = await this.#send({ method: 'GET', path: next });
      const page = (await readJson(response)) as Item[];
      yield* page;
      const link = nextLink(response.headers.get('link'));
      next = link === undefined ? undefined : this.#ownUrl(link, response);
    }
  }

  /** `link`, resolved against the page it came with, if it is under the base URL. */
  #ownUrl(link: string, response: Response): string {
    const base = new URL(`${this.#baseUrl}/`);
    let url: URL | undefined;
    try {
      url = new URL(link, response.url || base);
    } catch {
      url = undefined;
    }
    if (
      url === undefined ||
      url.origin !== base.origin ||
      !url.pathname.startsWith(base.pathname)
    ) {
      throw new PlantStoreError(
        response.status,
        {
          error: 0,
          message: `The Plant Store's next page link leaves ${this.#baseUrl}; not followed.`,
        },
        response.headers.get('x-amzn-requestid') ?? undefined,
      );
    }
    return url.href;
  }

  /**
   * Replaces a plant's name and tag, if it is still the version this client last saw (read it
   * first when it has seen none). @throws PlantStoreError 412/41200 when another change came
   * first: read the plant again and decide.
   */
  async update(id: bigint, plant: PlantReplacement): Promise<StoredPlant> {
    return this.#change(
      id,
      { method: 'PUT', path: `/plants/${id}`, body: plant },
      { name: plant.name, tag: plant.tag ?? null },
    );
  }

  /** Changes only what `patch` names (`tag: null` removes the tag); as `update` otherwise. */
  async patch(id: bigint, patch: PlantPatch): Promise<StoredPlant> {
    const path = `/plants/${id}`;
    return this.#change(
      id,
      { method: 'PATCH', path, body: patch, contentType: 'application/merge-patch+json' },
      patch,
    );
  }

  /**
   * Deletes a plant; deleting one that is not there is a success too. With `ifUnchanged`, only
   * if it is still the version this client last saw (read it first when it has seen none).
   * @throws PlantStoreError 412/41200 when, with `ifUnchanged`, another change came first.
   */
  async delete(id: bigint, options: { readonly ifUnchanged?: boolean } = {}): Promise<void> {
    const call: Call = { method: 'DELETE', path: `/plants/${id}` };
    if (options.ifUnchanged !== true) {
      await this.#send(call);
    } else {
      if (!this.#etags.has(id)) {
        // Never seen and not there: nothing to delete, which is a success.
        const found = await this.get(id).catch((error: unknown) => {
          if (error instanceof PlantStoreError && error.status === 404) return undefined;
          throw error;
        });
        if (found === undefined) return;
      }
      await this.#send({ ...call, headers: { 'If-Match': this.#etags.get(id) as string } });
    }
    this.#etags.delete(id);
  }

  /** The last `ETag` this client saw of a plant. */
  etagOf(id: bigint): string | undefined {
    return this.#etags.get(id);
  }

  async #change(id: bigint, call: Call, wanted: PlantPatch): Promise<StoredPlant> {
    if (!this.#etags.has(id)) await this.get(id);
    const retried = { unavailable: false };
    let response: Response;
    try {
      response = await this.#send(
        { ...call, headers: { 'If-Match': this.#etags.get(id) as string } },
        retried,
      );
    } catch (error) {
      // A 503 may come after the change was made; its retry then finds a newer version (412).
      // If the plant is now what this change asked for, it was this change.
      if (!(error instanceof PlantStoreError && error.error === 41200 && retried.unavailable)) {
        throw error;
      }
      const plant = await this.get(id);
      const name = wanted.name === undefined || wanted.name === plant.name;
      const tag = wanted.tag === undefined || (wanted.tag ?? undefined) === plant.tag;
      if (name && tag) return plant;
      throw error;
    }
    this.#keepEtag(id, response);
    return (await readJson(response)) as StoredPlant;
  }

  #keepEtag(id: bigint, response: Response): void {
    const etag = response.headers.get('etag');
    if (etag !== null) this.#etags.set(id, etag);
  }

  /**
   * One call, retried after `429` and `503` (both mean: try again later), or thrown. `retried`
   * is set when a `503` was retried: the earlier try may have been carried out.
   */
  async #send(call: Call, retried: { unavailable: boolean } = { unavailable: false }) {
    const maxRetries = this.#options.maxRetries ?? 3;
    for (let attempt = 0; ; attempt += 1) {
      const headers: Record<string, string> = {
        Accept: 'application/json',
        Authorization: `Bearer ${await this.#token()}`,
        ...call.headers,
      };
      if (call.body !== undefined) headers['Content-Type'] = call.contentType ?? 'application/json';
      const url = call.path.startsWith('http') ? call.path : `${this.#baseUrl}${call.path}`;
      let response: Response;
      try {
        response = await this.#fetch(url, {
          method: call.method,
          headers,
          ...(call.body === undefined ? {} : { body: stringifyExactJson(call.body) }),
        });
      } catch (error) {
        throw new PlantStoreError(
          0,
          {
            error: 0,
            message: `The Plant Store could not be reached (${(error as Error).message}).`,
          },
          undefined,
          { cause: error },
        );
      }
      if (response.ok) return response;
      // A 409 with `Retry-After`: the same `Idempotency-Key`'s first request is under way.
      const retryable =
        response.status === 429 ||
        response.status === 503 ||
        (response.status === 409 && response.headers.has('retry-after'));
      const delay = retryable ? this.#retryDelay(response.headers.get('retry-after'), attempt) : -1;
      if (delay < 0 || attempt >= maxRetries) throw await errorOf(response);
      await response.body?.cancel();
      if (response.status === 503) retried.unavailable = true;
      await sleep(delay);
    }
  }

  /** The token, as given or as its function answers; a function that throws is a failure too. */
  async #token(): Promise<string> {
    const { token } = this.#options;
    if (typeof token === 'string') return token;
    try {
      return await token();
    } catch (error) {
      throw new PlantStoreError(
        0,
        { error: 0, message: 'The token could not be had; nothing was sent.' },
        undefined,
        { cause: error },
      );
    }
  }

  /**
   * Never sooner than `Retry-After` says (delay-seconds or an HTTP date, RFC 9110 §10.2.3; 1 s
   * when absent or unreadable, doubled per attempt), and never sooner than a floor of 250 ms,
   * plus up to half again at random so that clients spread out; -1 (give up) when that is past
   * the longest wait.
   */
  #retryDelay(retryAfter: string | null, attempt: number): number {
    const asked = retryAfterMilliseconds(retryAfter);
    const base = Math.max(asked ?? 1000 * 2 ** attempt, retryFloorMilliseconds);
    const delay = base * (1 + Math.random() / 2);
    return delay <= (this.#options.maxRetryDelayMilliseconds ?? 30_000) ? delay : -1;
  }
}

async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return parseExactJson(text);
  } catch (error) {
    throw new PlantStoreError(
      response.status,
      { error: 0, message: 'The Plant Store answered with a body that is not JSON.' },
      response.headers.get('x-amzn-requestid') ?? undefined,
      { cause: error },
    );
  }
}

/** The least wait before a retry, whatever `Retry-After` says: no client retries at once. */
const retryFloorMilliseconds = 250;

/**
 * The wait `Retry-After` asks for: delay-seconds (`120`) or an HTTP date, in milliseconds from
 * now; `undefined` when absent or neither. A date in the past asks for no wait.
 */
function retryAfterMilliseconds(value: string | null): number | undefined {
  const text = value?.trim() ?? '';
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000;
  if (!/[a-z]/i.test(text)) return undefined;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

async function errorOf(response: Response): Promise<PlantStoreError> {
  let body: unknown;
  try {
    body = parseExactJson(await response.text());
  } catch {
    // Not the API's Error body (a proxy in between, say): the status still says what happened.
  }
  return new PlantStoreError(
    response.status,
    body,
    response.headers.get('x-amzn-requestid') ?? undefined,
  );
}

/** The `rel="next"` URL of a `Link` header (RFC 8288), if any. */
function nextLink(header: string | null): string | undefined {
  for (const link of header?.split(',') ?? []) {
    const match = /^\s*<([^>]*)>\s*;(.*)$/.exec(link);
    if (match !== null && /(^|;)\s*rel="?next"?\s*(;|$)/i.test(match[2] as string)) return match[1];
  }
  return undefined;
}

function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}
