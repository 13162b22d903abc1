/**
 * The fault run's clients and fault injector: plants created, changed and deleted, endpoints
 * changed and recovered, each request retried as the contract tells clients to (a 503 or 429
 * after its `Retry-After`, a refused connection while `npm start` restarts), every answer kept
 * for the checker.
 */
import type { FaultProxy } from '../../beds/fault-proxy.ts';
import type { WebhookReceiver } from '../../beds/webhook-receiver.ts';
import type { Fault, Operation } from './fault-plan.ts';
import type { FaultClient, RunAnswer, RunEndpoint } from './invariants.ts';

/** How long a client keeps trying one request (a restart, a long pause). */
const requestBudgetMilliseconds = 90_000;

const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/**
 * One request, retried until it is answered other than 503 (or a 429 asking more than 5 s) or
 * its budget is spent; every answer goes to `answers`.
 */
export async function request(
  client: FaultClient,
  answers: RunAnswer[],
  method: string,
  path: string,
  options: { token: string; body?: unknown; headers?: Record<string, string> },
): Promise<{ status: number; body: unknown; headers: Headers } | undefined> {
  const deadline = Date.now() + requestBudgetMilliseconds;
  while (Date.now() < deadline) {
    let response: Response;
    try {
      response = await fetch(`${client.url}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${options.token}`,
          ...(options.body === undefined ? {} : { 'Content-Type': 'application/json' }),
          ...options.headers,
        },
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
        signal: AbortSignal.timeout(60_000),
      });
    } catch {
      // npm start is down (killed, restarting): try again shortly.
      await sleep(250);
      continue;
    }
    const text = await response.text();
    answers.push({ method, path, status: response.status, body: text });
    const retryAfter = Number(response.headers.get('retry-after') ?? 1);
    if (response.status === 503 || (response.status === 429 && retryAfter <= 5)) {
      await sleep(retryAfter * 1000);
      continue;
    }
    return {
      status: response.status,
      body: text === '' ? undefined : JSON.parse(text),
      headers: response.headers,
    };
  }
  // Status 0: never answered within the budget, which the checker counts as broken.
  answers.push({
    method,
    path,
    status: 0,
    body: `not answered in ${requestBudgetMilliseconds} ms`,
  });
  return undefined;
}

/** Registers an endpoint at `receiver` with `settings`, and hands the receiver its secret. */
export async function registerEndpoint(
  client: FaultClient,
  receiver: WebhookReceiver,
  settings: Record<string, unknown>,
): Promise<RunEndpoint> {
  const created = await request(client, [], 'POST', '/webhook-endpoints', {
    token: client.manager,
    body: { url: receiver.url, ...settings },
  });
  if (created?.status !== 201) throw new Error(`Not registered: ${JSON.stringify(created)}`);
  const { id, secret, events } = created.body as { id: string; secret: string; events: string[] };
  receiver.setSecret(secret);
  return { id, receiver, events, createdAt: Date.now() };
}

/**
 * Runs `operations` with four clients side by side until they are done or `milliseconds` have
 * passed; resolves every answer.
 */
export async function runWorkload(
  client: FaultClient,
  endpoints: readonly RunEndpoint[],
  operations: readonly Operation[],
  milliseconds: number,
): Promise<RunAnswer[]> {
  const answers: RunAnswer[] = [];
  // Ids of this run's own, exact as JSON numbers (under 2^53).
  const base = Date.now() * 100;
  const created: number[] = [];
  const since = new Date(Date.now() - 1000).toISOString();
  const end = Date.now() + milliseconds;
  let next = 0;
  let plants = 0;
  const pick = (step: number) => created[step % Math.max(created.length, 1)];
  const run = async (operation: Operation, step: number) => {
    const endpoint = 'endpoint' in operation ? endpoints[operation.endpoint] : undefined;
    const plant = pick(step);
    switch (operation.kind) {
      case 'create': {
        plants += 1;
        const id = base + plants;
        await request(client, answers, 'POST', '/plants', {
          token: client.writer,
          // Every fifth with the characters SQS refuses, which a queued event must still carry.
          body: { id, name: step % 5 === 0 ? `Plant\uFFFF${step}\uFFFE` : `Plant ${step}` },
        });
        created.push(id);
        return;
      }
      case 'update':
        if (plant === undefined) return;
        await request(client, answers, 'PATCH', `/plants/${plant}`, {
          token: client.writer,
          body: { name: `Changed ${step}` },
          headers: { 'Content-Type': 'application/merge-patch+json', 'If-Match': '*' },
        });
        return;
      case 'delete':
        if (plant === undefined) return;
        await request(client, answers, 'DELETE', `/plants/${plant}`, { token: client.writer });
        return;
      case 'describe-endpoint':
        await request(client, answers, 'PATCH', `/webhook-endpoints/${endpoint?.id}`, {
          token: client.manager,
          body: { description: `step ${step}` },
          headers: { 'Content-Type': 'application/merge-patch+json', 'If-Match': '*' },
        });
        return;
      case 'recover':
        await request(client, answers, 'POST', `/webhook-endpoints/${endpoint?.id}/recover`, {
          token: client.manager,
          body: { since },
        });
        return;
    }
  };
  const worker = async () => {
    while (Date.now() < end && next < operations.length) {
      const step = next++;
      await run(operations[step] as Operation, step);
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  return answers;
}

/** Strikes each fault and ends it after its time; overlapping ones of a kind end with the last. */
export function faultInjector(options: {
  readonly proxy: FaultProxy;
  readonly refuseFile: string;
  readonly receivers: readonly WebhookReceiver[];
  kill(restartAfter: number): Promise<void>;
  writeFile(path: string): void;
  removeFile(path: string): void;
}) {
  const active = new Map<string, number>();
  const pending = new Set<Promise<void>>();
  const timers = new Set<NodeJS.Timeout>();
  let killing: Promise<void> = Promise.resolve();
  /** Begins `name` (if not already on) and ends it after `milliseconds` unless still wanted. */
  const hold = (name: string, milliseconds: number, on: () => void, off: () => void) => {
    const count = active.get(name) ?? 0;
    if (count === 0) on();
    active.set(name, count + 1);
    const timer = setTimeout(() => {
      timers.delete(timer);
      end(name, off);
    }, milliseconds);
    timers.add(timer);
  };
  const offs = new Map<string, () => void>();
  const end = (name: string, off: () => void) => {
    const count = (active.get(name) ?? 1) - 1;
    active.set(name, count);
    if (count === 0) off();
  };
  const inject = (fault: Fault) => {
    switch (fault.kind) {
      case 'pause-store': {
        const off = () => options.proxy.resume();
        offs.set('store', off);
        hold('store', fault.milliseconds, () => options.proxy.pause(), off);
        return;
      }
      case 'slow-store': {
        const off = () => options.proxy.slow(0);
        offs.set('slow', off);
        hold('slow', fault.milliseconds, () => options.proxy.slow(fault.delay), off);
        return;
      }
      case 'refuse-queue': {
        const off = () => options.removeFile(options.refuseFile);
        offs.set('queue', off);
        hold('queue', fault.milliseconds, () => options.writeFile(options.refuseFile), off);
        return;
      }
      case 'hang-receiver': {
        const receiver = options.receivers[fault.receiver];
        const off = () => receiver?.setMode('ok');
        offs.set(`receiver-${fault.receiver}`, off);
        hold(
          `receiver-${fault.receiver}`,
          fault.milliseconds,
          () => receiver?.setMode('hang'),
          off,
        );
        return;
      }
      case 'kill': {
        // One kill at a time: a second waits for the restart of the first.
        killing = killing.then(() => options.kill(fault.restartAfter));
        pending.add(killing);
        return;
      }
    }
  };
  return {
    inject,
    /** Ends every fault now and waits for a restart under way. */
    endAll: async () => {
      for (const timer of timers) clearTimeout(timer);
      for (const off of offs.values()) off();
      active.clear();
      await Promise.all(pending);
    },
  };
}
