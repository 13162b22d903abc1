/**
 * A local API for the webhook endpoint tests (its own tables on the test store, throttling off,
 * a shortened retry schedule, a clock the test can move), receivers on 127.0.0.1 verifying with
 * the Standard Webhooks library, and requests as a client with `webhooks/manage` and `plants/read` makes them.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startWebhookReceiver, type WebhookReceiver } from '../../beds/webhook-receiver.ts';
import { createLogger } from '../../functions/shared/platform/logger.ts';
import { localUrlPolicy } from '../../functions/webhook-endpoints/endpoint-url.ts';
import { type LocalApi, type LocalWebhookOptions, startLocalApi } from '../../local/local-api.ts';
import { testStoreUrl } from '../support/test-store.ts';

/** An answer: its status, headers and JSON body (a test reads the members it expects). */
export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: each test reads the members its answer has.
  readonly body: any;
}

export interface EndpointBed {
  readonly api: LocalApi;
  /** Moves the endpoints' clock (days, for the 5-day disable) and the functions'. */
  advance(milliseconds: number): void;
  /** A request as `client` (a token subject) with `webhooks/manage` and `plants/read`, JSON body when given. */
  request(
    client: string,
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<Answer>;
  /** A receiver on 127.0.0.1; verify with `setSecret` once the endpoint's secret is known. */
  receiver(): Promise<WebhookReceiver>;
  /** Registers an endpoint for `client` at the receiver and gives it the secret. */
  register(
    client: string,
    receiver: WebhookReceiver,
    settings?: Record<string, unknown>,
  ): Promise<{ id: string; secret: string }>;
  /** Stores a plant (as a client with `plants/write`); resolves with its id. */
  createPlant(id: number, name?: string): Promise<void>;
  stop(): Promise<void>;
}

let counter = 0;

/** Starts the bed on the test store, or on `storeUrl` (a fault proxy in front of it, say). */
export async function startEndpointBed(
  options: LocalWebhookOptions = {},
  storeUrl = testStoreUrl(),
): Promise<EndpointBed> {
  counter += 1;
  const keysDirectory = await mkdtemp(join(tmpdir(), 'plant-store-endpoint-keys-'));
  let offset = 0;
  const running: { stop(): Promise<void> }[] = [];
  const api = await startLocalApi({
    port: 0,
    dynamoDbUrl: storeUrl,
    tableName: `plants-endpoints-${process.pid}-${Date.now()}-${counter}`,
    keysDirectory,
    throttlingStage: 'off',
    logger: createLogger({}, () => {}),
    webhooks: {
      retrySchedule: [0.2, 0.2],
      // No test asks DNS on the network: localhost is this machine, every other name unknown.
      endpointUrlPolicy: {
        ...localUrlPolicy,
        resolve: async (name) => (name === 'localhost' ? ['127.0.0.1'] : []),
      },
      now: () => Date.now() + offset,
      ...options,
    },
  });
  const request: EndpointBed['request'] = async (client, method, path, body, headers = {}) => {
    const response = await fetch(`${api.url}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${api.signToken({ scope: 'webhooks/manage plants/read', subject: client })}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined
        ? {}
        : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      body: text === '' ? undefined : JSON.parse(text),
    };
  };
  return {
    api,
    advance: (milliseconds) => {
      offset += milliseconds;
    },
    request,
    receiver: async () => {
      const receiver = await startWebhookReceiver(`whsec_${randomBytes(32).toString('base64')}`);
      running.push(receiver);
      return receiver;
    },
    register: async (client, receiver, settings = {}) => {
      const created = await request(client, 'POST', '/webhook-endpoints', {
        url: receiver.url,
        ...settings,
      });
      if (created.status !== 201) throw new Error(`Not registered: ${JSON.stringify(created)}`);
      receiver.setSecret(created.body.secret);
      return { id: created.body.id, secret: created.body.secret };
    },
    createPlant: async (id, name = 'Fern') => {
      const response = await fetch(`${api.url}/plants`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${api.signToken({ scope: 'plants/write' })}`,
          'Content-Type': 'application/json',
        },
        body: JSON.stringify({ id, name }),
      });
      if (response.status !== 200) throw new Error(`Plant ${id} not stored: ${response.status}`);
      await response.body?.cancel();
    },
    stop: async () => {
      for (const item of running.splice(0).reverse()) await item.stop();
      await api.stop();
      await rm(keysDirectory, { recursive: true, force: true });
    },
  };
}

/**
 * `call` again after each 503 or 429, as long as its `Retry-After` says, as the contract tells
 * clients to, until it is answered otherwise (at most `tries` calls). Resolves every answer.
 */
export async function retried(call: () => Promise<Answer>, tries = 20): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (let count = 1; ; count += 1) {
    const answer = await call();
    answers.push(answer);
    if (![429, 503].includes(answer.status) || count === tries) return answers;
    const seconds = Number(answer.headers.get('retry-after') ?? 1);
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  }
}

/** Waits until `check` holds, polling; fails after `timeoutMilliseconds`. */
export async function eventually(
  check: () => Promise<boolean> | boolean,
  timeoutMilliseconds = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMilliseconds;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
