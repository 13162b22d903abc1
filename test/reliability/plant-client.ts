/**
 * A client of `POST /plants` for the reliability suite: timed requests with raw bodies and
 * headers, bounded concurrency, and a check that every answer has the contract's shape.
 */
import { expect } from '@jest/globals';
import { everyErrorCode } from '../../functions/shared/errors/error-codes.ts';

/** One answer, its parsed body (`undefined` when not JSON) and how long it took. */
export interface TimedAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly contentType: string | null;
  readonly text: string;
  readonly body: unknown;
  readonly startedAt: number;
  readonly milliseconds: number;
}

export interface PostOptions {
  /** The bearer token; `undefined` sends no Authorization header unless `headers` has one. */
  readonly token?: string;
  /** Sent as given; `Content-Type: application/json` unless replaced. Pairs allow repeats. */
  readonly headers?: Record<string, string> | readonly (readonly [string, string])[];
  /**
   * A request that takes longer fails the test rather than hanging it. By default just past the
   * gateway's own bound (its 29 s integration timeout, API Gateway's): a client that gave up
   * sooner could not tell a request the API never answers from one a busy machine answers late.
   */
  readonly timeoutMilliseconds?: number;
}

/** Sends `POST /plants` with `body` as its exact bytes. */
export async function postPlant(
  url: string,
  body: string | Uint8Array,
  options: PostOptions = {},
): Promise<TimedAnswer> {
  const headers = new Headers();
  const given = Array.isArray(options.headers)
    ? options.headers
    : Object.entries(options.headers ?? {});
  if (!given.some(([name]) => name.toLowerCase() === 'content-type')) {
    headers.set('Content-Type', 'application/json');
  }
  if (options.token !== undefined) headers.set('Authorization', `Bearer ${options.token}`);
  for (const [name, value] of given) headers.append(name, value);
  const startedAt = performance.now();
  const response = await fetch(`${url}/plants`, {
    method: 'POST',
    headers,
    body,
    signal: AbortSignal.timeout(options.timeoutMilliseconds ?? 35_000),
  });
  const text = await response.text();
  const milliseconds = performance.now() - startedAt;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return {
    status: response.status,
    headers: response.headers,
    contentType: response.headers.get('content-type'),
    text,
    body: parsed,
    startedAt,
    milliseconds,
  };
}

/**
 * Sends `POST /plants` as a polite client does: a 503 (the store too busy within its deadline,
 * safe to retry because creates are idempotent) is asserted to have the contract's shape and
 * retried after a jittered back-off, up to `attempts` times. Returns the last answer and how
 * many 503s came before it.
 */
export async function postPlantRetryingUnavailable(
  url: string,
  body: string,
  options: PostOptions & { readonly attempts?: number } = {},
): Promise<TimedAnswer & { readonly unavailableAnswers: number }> {
  const attempts = options.attempts ?? 5;
  for (let attempt = 1; ; attempt += 1) {
    const answer = await postPlant(url, body, options);
    if (answer.status !== 503 || attempt === attempts) {
      return { ...answer, unavailableAnswers: attempt - 1 };
    }
    expectContractShape(answer);
    await new Promise((resolve) => setTimeout(resolve, 100 * attempt + Math.random() * 200));
  }
}

/** Runs `work` over `items` with at most `concurrency` at a time (the clients), keeping order. */
export async function runConcurrently<Item, Result>(
  items: readonly Item[],
  concurrency: number,
  work: (item: Item, index: number) => Promise<Result>,
): Promise<Result[]> {
  const results: Result[] = new Array(items.length);
  let next = 0;
  const client = async () => {
    while (next < items.length) {
      const index = next;
      next += 1;
      results[index] = await work(items[index] as Item, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, client));
  return results;
}

const knownErrors = new Map<number, number>(
  everyErrorCode().map((code) => [code.error, code.statusCode]),
);

/**
 * Asserts the contract's shape: JSON, and either a Plant (200: `name`, maybe `tag`, nothing else)
 * or an Error (`{error, message}` and nothing else, a code of the table with its status).
 */
export function expectContractShape(answer: {
  readonly status: number;
  readonly contentType: string | null | undefined;
  readonly body: unknown;
}): void {
  expect(answer.contentType).toMatch(/^application\/json\b/);
  const body = answer.body as Record<string, unknown>;
  expect(typeof body).toBe('object');
  expect(body).not.toBeNull();
  if (answer.status === 200) {
    expect(typeof body.name).toBe('string');
    expect(Object.keys(body).every((key) => key === 'name' || key === 'tag')).toBe(true);
    if ('tag' in body) expect(typeof body.tag).toBe('string');
    return;
  }
  expect(Object.keys(body).sort()).toEqual(['error', 'message']);
  expect(typeof body.message).toBe('string');
  expect(knownErrors.get(body.error as number)).toBe(answer.status);
}

/** The error code of an Error answer, or `undefined` for a success or another shape. */
export function errorCodeOf(answer: { readonly body: unknown }): number | undefined {
  const { error } = (answer.body ?? {}) as { error?: unknown };
  return typeof error === 'number' ? error : undefined;
}

/** The value below which `fraction` of `values` lie (nearest rank). */
export function percentile(values: readonly number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(0, Math.ceil(fraction * sorted.length) - 1);
  return sorted[rank] ?? Number.NaN;
}
