/**
 * The client against a fake fetch: where its token may go (only its own API), how long it waits
 * before a retry (Retry-After in both of RFC 9110's forms, never sooner, with a floor), and that
 * every failure, whatever its cause, is a PlantStoreError.
 */
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { PlantStoreClient, PlantStoreError } from '../../clients/typescript/src/index.ts';

const page = (body: string, headers: Record<string, string> = {}) =>
  new Response(body, { status: 200, headers: { 'Content-Type': 'application/json', ...headers } });

/** A client whose every request is recorded (URL and Authorization) and answered by `answer`. */
function recordingClient(
  answer: (url: string, call: number) => Response,
  options: { baseUrl?: string; maxRetries?: number } = {},
) {
  const sent: { url: string; authorization: string | null; at: number }[] = [];
  const client = new PlantStoreClient({
    baseUrl: options.baseUrl ?? 'https://api.plants.test/dev',
    token: 'secret-token',
    ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }),
    fetch: async (input, init) => {
      const url = String(input);
      sent.push({
        url,
        authorization: new Headers(init?.headers).get('authorization'),
        at: Date.now(),
      });
      return answer(url, sent.length);
    },
  });
  return { client, sent };
}

async function listAll(client: PlantStoreClient): Promise<bigint[]> {
  const ids: bigint[] = [];
  for await (const plant of client.list({ limit: 1 })) ids.push(plant.id);
  return ids;
}

describe('following Link', () => {
  it.each([
    ['another origin', 'https://evil.example/steal'],
    ['another scheme', 'http://api.plants.test/dev/plants?cursor=x'],
    ['another port', 'https://api.plants.test:8443/dev/plants?cursor=x'],
    ['the origin outside the base path', 'https://api.plants.test/other/plants?cursor=x'],
    ['a path that only starts like the base path', 'https://api.plants.test/devil/plants?cursor=x'],
    ['a relative reference that leaves it', '../../steal'],
  ])('refuses a next link to %s, and sends nothing there', async (_case, link) => {
    const { client, sent } = recordingClient(() =>
      page('[{"id":1,"name":"Fern"}]', { Link: `<${link}>; rel="next"` }),
    );
    await expect(listAll(client)).rejects.toThrow(PlantStoreError);
    expect(sent.map((request) => request.url)).toEqual([
      'https://api.plants.test/dev/plants?limit=1',
    ]);
  });

  it('follows a next link on its own origin and base path, with the token', async () => {
    const { client, sent } = recordingClient((url) =>
      url.includes('cursor')
        ? page('[{"id":2,"name":"Moss"}]')
        : page('[{"id":1,"name":"Fern"}]', {
            Link: '<https://api.plants.test/dev/plants?limit=1&cursor=abc>; rel="next"',
          }),
    );
    expect(await listAll(client)).toEqual([1n, 2n]);
    expect(sent.map((request) => request.authorization)).toEqual([
      'Bearer secret-token',
      'Bearer secret-token',
    ]);
  });
});

describe('Retry-After', () => {
  // The clock is Jest's: a wait is checked to the millisecond, and takes none of the test's time.
  beforeEach(() => {
    jest.useFakeTimers({
      doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'],
      now: Date.parse('2026-11-25T12:00:00.400Z'),
    });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  const busyThenFine = (retryAfter: string) => (_url: string, call: number) =>
    call === 1
      ? new Response('{"error":42900,"message":"Too many requests; retry later."}', {
          status: 429,
          headers: { 'Retry-After': retryAfter },
        })
      : page('{"id":1,"name":"Fern"}');

  /**
   * Asks for a plant, answered 429 with `retryAfter` first: no retry before `earliest` ms, one by
   * `latest` ms (the jitter adds up to half again). Answers how long the client waited.
   */
  async function expectRetryBetween(retryAfter: string, earliest: number, latest: number) {
    const { client, sent } = recordingClient(busyThenFine(retryAfter));
    const answered = client.get(1n);
    await jest.advanceTimersByTimeAsync(earliest - 1);
    expect(sent).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(latest - earliest + 1);
    await answered;
    expect(sent).toHaveLength(2);
    const waited = (sent[1]?.at ?? 0) - (sent[0]?.at ?? 0);
    expect(waited).toBeGreaterThanOrEqual(earliest);
    return waited;
  }

  it('waits until the HTTP date it names (RFC 9110 §10.2.3), never sooner', async () => {
    const due = new Date('2026-11-25T12:00:03Z');
    const ahead = due.getTime() - Date.now();
    await expectRetryBetween(due.toUTCString(), ahead, ahead * 1.5);
    expect(Date.now()).toBeGreaterThanOrEqual(due.getTime());
  });

  it('waits the seconds it names, never sooner', async () => {
    await expectRetryBetween('2', 2000, 3000);
  });

  it.each([['0'], ['0.1'], [new Date(0).toUTCString()]])(
    'keeps a floor of 250 ms for Retry-After "%s"',
    async (retryAfter) => {
      await expectRetryBetween(retryAfter, 250, 375);
    },
  );

  it.each([[''], ['  '], ['soon'], ['-5']])(
    'waits as if Retry-After were absent (1 s) when it reads "%s"',
    async (retryAfter) => {
      await expectRetryBetween(retryAfter, 1000, 1500);
    },
  );

  it('spreads retries at random above the wait (jitter)', async () => {
    const waits: number[] = [];
    for (let run = 0; run < 6; run += 1) waits.push(await expectRetryBetween('0', 250, 375));
    expect(new Set(waits.map((wait) => Math.round(wait / 10))).size).toBeGreaterThan(1);
  });
});

describe('every failure is a PlantStoreError', () => {
  it('wraps a token function that throws, without sending anything', async () => {
    let calls = 0;
    const client = new PlantStoreClient({
      baseUrl: 'https://api.plants.test',
      token: () => {
        throw new TypeError('no session');
      },
      fetch: async () => {
        calls += 1;
        return page('{}');
      },
    });
    const failure = await client.get(1n).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PlantStoreError);
    expect(failure).toMatchObject({ status: 0, error: 0 });
    expect((failure as Error).cause).toBeInstanceOf(TypeError);
    expect(calls).toBe(0);
  });

  it.each([
    ['a string code and a number message', '{"error":"41200","message":5}'],
    ['a fractional code', '{"error":412.5,"message":"changed"}'],
    ['an array', '[41200]'],
    ['null', 'null'],
    ['text that is not JSON', 'Bad Gateway'],
  ])('falls back to the status\u2019s code and a generic message for %s', async (_case, body) => {
    const { client } = recordingClient(() => new Response(body, { status: 412 }));
    const failure = await client.get(1n).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PlantStoreError);
    expect(failure).toMatchObject({
      status: 412,
      error: 41200,
      message: 'The Plant Store answered HTTP 412.',
    });
  });

  it('keeps the code and message of a well-formed Error body', async () => {
    const { client } = recordingClient(
      () => new Response('{"error":40401,"message":"No plant with this id."}', { status: 404 }),
    );
    await expect(client.get(1n)).rejects.toMatchObject({
      status: 404,
      error: 40401,
      message: 'No plant with this id.',
    });
  });

  it('wraps a body that is not JSON on a success', async () => {
    const { client } = recordingClient(() => new Response('<html>', { status: 200 }));
    await expect(client.get(1n)).rejects.toBeInstanceOf(PlantStoreError);
  });
});

describe('Idempotency-Key', () => {
  const created = () =>
    new Response('{"id":"ep_1","secret":"whsec_x"}', {
      status: 201,
      headers: { 'Content-Type': 'application/json' },
    });
  const failure = (status: number, error: number, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify({ error, message: 'x' }), {
      status,
      headers: { 'Content-Type': 'application/json', ...headers },
    });

  function keyRecordingClient(answer: (call: number) => Response) {
    const keys: (string | null)[] = [];
    const client = new PlantStoreClient({
      baseUrl: 'https://api.plants.test/dev',
      token: 'secret-token',
      fetch: async (_input, init) => {
        keys.push(new Headers(init?.headers).get('idempotency-key'));
        return answer(keys.length);
      },
    });
    return { client, keys };
  }

  it('sends one key with a create and every retry of it (503, and 409 while under way), a new key with the next', async () => {
    const { client, keys } = keyRecordingClient((call) =>
      call === 1
        ? failure(503, 50300, { 'Retry-After': '0' })
        : call === 2
          ? failure(409, 40901, { 'Retry-After': '0' })
          : created(),
    );
    await client.webhookEndpoints.create({ url: 'https://hooks.example.com/' });
    await client.webhookEndpoints.create({ url: 'https://hooks.example.com/' });
    expect(keys).toHaveLength(4);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys.slice(0, 3)).toEqual([keys[0], keys[0], keys[0]]);
    expect(keys[3]).not.toBe(keys[0]);
  });

  it("sends the caller's key as given, and keys a test, a rotation and each recover call", async () => {
    const { client, keys } = keyRecordingClient(
      () =>
        new Response('{"eventId":"msg_1","secret":"whsec_x","events":0,"more":false}', {
          status: 200,
          headers: { 'Content-Type': 'application/json' },
        }),
    );
    await client.webhookEndpoints.test('ep_1', { idempotencyKey: 'order-42' });
    await client.webhookEndpoints.rotateSecret('ep_1');
    await client.webhookEndpoints.recover('ep_1', '2026-11-27T00:00:00Z');
    expect(keys[0]).toBe('order-42');
    expect(keys.slice(1).every((key) => key !== null && key !== 'order-42')).toBe(true);
  });

  it('does not retry a 409 that asks for no retry (a disabled endpoint)', async () => {
    const { client, keys } = keyRecordingClient(() => failure(409, 40900));
    await expect(client.webhookEndpoints.recover('ep_1', '2026-11-27T00:00:00Z')).rejects.toThrow(
      PlantStoreError,
    );
    expect(keys).toHaveLength(1);
  });
});
