/**
 * The DynamoDB document client, configured so that a hung or unreachable store fails fast.
 *
 * Time bound of one store call (see also `storeDeadlineMilliseconds`): each attempt gives up
 * after `connectionTimeoutMilliseconds` to connect and `requestTimeoutMilliseconds` for the whole
 * request; `maxAttempts` attempts with jittered backoff, every call its own
 * ({@link everyCallRetries}); and the caller's deadline aborts whatever is still running. The
 * Lambda timeout (about 10 s) is far beyond that, so the client always gets a 503 it may retry,
 * never a gateway timeout.
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Readable } from 'node:stream';
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  UpdateCommand,
  type UpdateCommandInput,
  type UpdateCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import { isServerError, isThrottlingError, isTransientError } from '@smithy/core/retry';
import type { RetryErrorInfo, RetryStrategyV2, RetryToken } from '@smithy/types';
import { StoreUnavailableError } from '../errors/errors.ts';

export interface DocumentClientOptions {
  /** A DynamoDB-compatible store's URL (DynamoDB Local); AWS's regional endpoint when absent. */
  url?: string;
  /** Per attempt: time to establish the connection. */
  connectionTimeoutMilliseconds?: number;
  /** Per attempt: time for the whole request and response. */
  requestTimeoutMilliseconds?: number;
  /** Attempts in total, first one included. */
  maxAttempts?: number;
  /**
   * With `url`: the credentials to sign with. DynamoDB Local (without `-sharedDb`) keeps one
   * database per access key id and region, so the key id `npm start` keeps private selects its
   * data. @default the environment's, or a placeholder
   */
  credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
}

/** The defaults, chosen so that three attempts plus backoff fit in the deadline below. */
export const defaultDocumentClientOptions = {
  connectionTimeoutMilliseconds: 500,
  requestTimeoutMilliseconds: 1_000,
  maxAttempts: 3,
} as const;

/** The overall deadline of one store call, retries included (an `abortSignal` on `send`). */
export const storeDeadlineMilliseconds = 3_000;

/**
 * Creates a document client with bounded timeouts and exact numbers: numbers are never turned
 * into a lossy JavaScript `number` on the way in (bigint or `NumberValue` are written as N) or
 * out (`wrapNumbers` reads N as `NumberValue`).
 */
export function createDocumentClient(options: DocumentClientOptions = {}): DynamoDBDocumentClient {
  const { url } = options;
  const settings = { ...defaultDocumentClientOptions, ...withoutUndefined(options) };
  const client = new DynamoDBClient({
    ...(url === undefined ? {} : localStoreSettings(url, options.credentials)),
    maxAttempts: settings.maxAttempts,
    retryStrategy: everyCallRetries(settings.maxAttempts),
    streamCollector: collectResponseBody,
    requestHandler: {
      connectionTimeout: settings.connectionTimeoutMilliseconds,
      requestTimeout: settings.requestTimeoutMilliseconds,
      throwOnRequestTimeout: true,
      // Reusing connections saves a TLS handshake on every warm invocation.
      httpAgent: new HttpAgent({ keepAlive: true }),
      httpsAgent: new HttpsAgent({ keepAlive: true }),
    },
  });
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true },
    unmarshallOptions: { wrapNumbers: true },
  });
}

/**
 * The SDK's standard retries (throttling and transient errors, full-jitter exponential backoff
 * from 50 ms, or 1 s after throttling), but with `maxAttempts` for every call: without the
 * SDK's retry quota, a bucket of 500 per client that each retry draws 14 from and each success
 * refills by 1. An outage drains it, and for seconds after the store is back every call then
 * had one attempt: a slow first answer was a 503 where the docs promise three attempts within
 * 3 s. Here the deadline bounds what retries cost instead (three attempts, 3 s, a call), and
 * API Gateway's throttling bounds the calls (docs/decisions/store-retries.md).
 */
export function everyCallRetries(maxAttempts: number): RetryStrategyV2 {
  const token = (retries: number, delay: number): RetryToken => ({
    getRetryCount: () => retries,
    getRetryDelay: () => delay,
  });
  return {
    acquireInitialRetryToken: async () => token(0, 0),
    refreshRetryTokenForRetry: async (previous: RetryToken, error: RetryErrorInfo) => {
      const retries = previous.getRetryCount();
      const retryable = error.errorType === 'THROTTLING' || error.errorType === 'TRANSIENT';
      if (!retryable || retries + 1 >= maxAttempts) throw new Error('No retry left');
      const base = error.errorType === 'THROTTLING' ? 1_000 : 50;
      return token(retries + 1, Math.floor(Math.random() * base * 2 ** retries));
    },
    recordSuccess: () => {},
  };
}

/**
 * Reads a response body into bytes, as the SDK's own collector does for the Node.js streams its
 * HTTP handler returns. The SDK's collector first asks whether the body is a web stream, and the
 * global `ReadableStream` it reads to find out loads Node.js's web streams: ~1.5 ms of every cold
 * start's first request (`npm run bench`), for a type this client never receives.
 * `streamCollector` is a client setting the SDK types but marks internal: recheck it when
 * upgrading the SDK (`test/functions/shared/dynamodb.test.ts` covers this reader).
 */
async function collectResponseBody(body: Readable): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/**
 * Whether an AWS call's error (the store's, the queue's, KMS's, Secrets Manager's) means
 * "unavailable, safe to retry" (503): throttling after the SDK's retries, timeouts, the
 * deadline's abort, connection failures and 5xx answers.
 */
export function isUnavailableError(error: unknown): boolean {
  // Not `instanceof Error`: Node's socket errors may come from another realm (Jest's VM, for one).
  if (typeof error !== 'object' || error === null) return false;
  const classified = error as Parameters<typeof isTransientError>[0];
  if (classified.name === 'AbortError' || classified.name === 'TimeoutError') return true;
  return isThrottlingError(classified) || isTransientError(classified) || isServerError(classified);
}

/** What one operation on the plants table needs. */
export interface StoreDependencies {
  readonly documentClient: DynamoDBDocumentClient;
  readonly tableName: string;
  /** Overall time for the store call, retries included; {@link storeDeadlineMilliseconds} by default. */
  readonly deadlineMilliseconds?: number;
}

/**
 * Runs one store call under the overall deadline, given to `call` as the `abortSignal` for
 * `send`. Whatever means "unavailable" becomes a {@link StoreUnavailableError} (503); anything
 * else is rethrown as it is, for the caller to translate or to answer 500.
 */
export async function callStore<Result>(
  call: (abortSignal: AbortSignal) => Promise<Result>,
  deadlineMilliseconds: number = storeDeadlineMilliseconds,
): Promise<Result> {
  try {
    return await call(AbortSignal.timeout(deadlineMilliseconds));
  } catch (error) {
    if (isUnavailableError(error)) throw new StoreUnavailableError({ cause: error });
    throw error;
  }
}

/** A conditional write whose condition did not hold. */
export interface ConditionFailed {
  readonly conditionFailed: true;
  /** The item as it stood, where the write asked for it (`ReturnValuesOnConditionCheckFailure`). */
  readonly item?: Record<string, AttributeValue>;
}

/**
 * Runs one conditional write as {@link callStore} does: resolves its output, or
 * {@link ConditionFailed} when its condition did not hold, which each caller reads as it must (a
 * newer state stands, a limit is met, a claim is taken). Any other failure throws.
 */
export async function writeIf<Output extends object>(
  call: (abortSignal: AbortSignal) => Promise<Output>,
  deadlineMilliseconds?: number,
): Promise<Output | ConditionFailed> {
  try {
    return await callStore(call, deadlineMilliseconds);
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    return { conditionFailed: true, ...(error.Item === undefined ? {} : { item: error.Item }) };
  }
}

/** {@link writeIf} for one update. */
export function updateIf(
  store: {
    readonly documentClient: DynamoDBDocumentClient;
    readonly deadlineMilliseconds?: number;
  },
  input: UpdateCommandInput,
): Promise<UpdateCommandOutput | ConditionFailed> {
  return writeIf(
    (abortSignal) => store.documentClient.send(new UpdateCommand(input), { abortSignal }),
    store.deadlineMilliseconds,
  );
}

/** Whether a conditional write's condition did not hold. */
export function conditionFailed(result: object): result is ConditionFailed {
  return 'conditionFailed' in result;
}

/**
 * `call` again while the store is unavailable, `tries` times in all: for a write that must not
 * be left undone when the store pauses for a few seconds (each try is bounded by its deadline).
 */
export async function retryWhileUnavailable<Result>(
  call: () => Promise<Result>,
  tries = 3,
): Promise<Result> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof StoreUnavailableError) || attempt >= tries) throw error;
    }
  }
}

/**
 * A client's settings for a local store (`endpoint`): DynamoDB Local accepts any credentials;
 * without some, the SDK's default chain would end up asking the EC2 metadata service, which is
 * slow or absent on a developer's machine. `npm start` signs its streams client with these too,
 * so that both clients see the same database.
 */
export function localStoreSettings(
  endpoint: string,
  credentials: DocumentClientOptions['credentials'],
) {
  const environment = process.env;
  if (credentials !== undefined) {
    // The database is chosen by key id and region: both fixed, so the data is found again.
    return { endpoint, region: localStoreRegion, credentials };
  }
  const hasCredentials = environment.AWS_ACCESS_KEY_ID !== undefined;
  return {
    endpoint,
    region: environment.AWS_REGION ?? environment.AWS_DEFAULT_REGION ?? localStoreRegion,
    ...(hasCredentials ? {} : { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
  };
}

/** The region a local store's clients sign for when `npm start` chooses the credentials. */
export const localStoreRegion = 'us-east-1';

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(value).filter(([, entry]) => entry !== undefined),
  ) as Partial<T>;
}

/**
 * Condition terms joined by OR, in parentheses when that makes an OR (so that an AND around it
 * binds as meant), and only then: DynamoDB refuses redundant parentheses.
 */
export function anyOf(terms: readonly string[]): string {
  const joined = terms.join(' OR ');
  return joined.includes(' OR ') ? `(${joined})` : joined;
}
