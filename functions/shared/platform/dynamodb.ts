/**
 * The DynamoDB document client, bounded so that a hung store fails fast (per-attempt timeouts,
 * jittered retries, a deadline per call): a client gets a 503 it may retry, never a timeout.
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
import type { GetOutputType, RetryErrorInfo, RetryStrategyV2, RetryToken } from '@smithy/types';
import { StoreUnavailableError } from '../errors/errors.ts';
import { remainingBudget } from './invocation-budget.ts';
import { traceAwsCalls } from './spans.ts';

export interface DocumentClientOptions {
  /** DynamoDB Local's URL; AWS's regional endpoint when absent. */
  url?: string;
  /** Per attempt. */
  connectionTimeoutMilliseconds?: number;
  requestTimeoutMilliseconds?: number;
  /** First one included. */
  maxAttempts?: number;
  /** With `url`: DynamoDB Local keeps a database per key id and region, so this picks one. */
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

/** A document client with bounded timeouts, reading and writing numbers exactly (`NumberValue`). */
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
  traceAwsCalls(client, 'DynamoDB');
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true },
    unmarshallOptions: { wrapNumbers: true },
  });
}

/**
 * The SDK's standard retries, but `maxAttempts` for every call: no retry quota, which an outage
 * drains for seconds after. The deadline bounds them (docs/decisions/store-retries.md).
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
 * Reads a response body as the SDK's collector does, without its web-stream check that loads
 * Node's web streams (~1.5 ms of a cold start). `streamCollector` is internal: recheck on upgrade.
 */
async function collectResponseBody(body: Readable): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** Whether an AWS call's error means "unavailable, safe to retry" (503). */
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
  /** A store call's overall time, retries included; {@link storeDeadlineMilliseconds} by default. */
  readonly deadlineMilliseconds?: number;
}

/**
 * One store call under the deadline, and within the invocation's budget (`invocation-budget.ts`);
 * "unavailable", or no time left, becomes a {@link StoreUnavailableError} (503).
 */
export async function callStore<Result>(
  call: (abortSignal: AbortSignal) => Promise<Result>,
  deadlineMilliseconds: number = storeDeadlineMilliseconds,
): Promise<Result> {
  const budget = remainingBudget();
  if (budget <= 0) throw new StoreUnavailableError();
  try {
    return await call(AbortSignal.timeout(Math.min(deadlineMilliseconds, budget)));
  } catch (error) {
    if (isUnavailableError(error)) throw new StoreUnavailableError({ cause: error });
    throw error;
  }
}

/** One command under {@link callStore}, with the store's deadline. */
export function sendToStore<Command extends { readonly input: object }>(
  store: Pick<StoreDependencies, 'documentClient' | 'deadlineMilliseconds'>,
  command: Command,
): Promise<GetOutputType<Command>> {
  return callStore(
    (abortSignal) => store.documentClient.send(command as never, { abortSignal }),
    store.deadlineMilliseconds,
  );
}

/** A conditional write whose condition did not hold. */
export interface ConditionFailed {
  readonly conditionFailed: true;
  /** The item as it stood, where the write asked for it (`ReturnValuesOnConditionCheckFailure`). */
  readonly item?: Record<string, AttributeValue>;
}

/** {@link callStore} for a conditional write: its output, or {@link ConditionFailed}. */
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
  store: Pick<StoreDependencies, 'documentClient' | 'deadlineMilliseconds'>,
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

/** `call` again while the store is unavailable, `tries` in all, for a write that must land. */
export async function retryWhileUnavailable<Result>(call: () => Promise<Result>, tries = 3) {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof StoreUnavailableError) || attempt >= tries) throw error;
    }
  }
}

/** A local store's settings: any credentials do, and none would make the SDK ask EC2's metadata. */
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
  const defined = Object.entries(value).filter(([, entry]) => entry !== undefined);
  return Object.fromEntries(defined) as Partial<T>;
}

/** Terms joined by OR, in parentheses only if there is an OR: DynamoDB refuses redundant ones. */
export function anyOf(terms: readonly string[]): string {
  const joined = terms.join(' OR ');
  return joined.includes(' OR ') ? `(${joined})` : joined;
}
