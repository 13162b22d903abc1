/**
 * A dead subscriber beside a live one on the deployed webhook path's test bed (moto's SQS and S3,
 * DynamoDB Local's stream, the real fan-out and delivery), time-compressed. Against a run without
 * it: the live subscriber's delay (p50, p99), the delivery queue's messages in flight (bounded by
 * the pollers' batches, not the dead one's backlog), how late each retry came, and that every
 * event was delivered or dead-lettered. With `endpoints`, the dead subscriber is one webhook
 * endpoint among that many. moto scans its queues on every call, so the Retries queue has a moto
 * of its own and the backlog is sized to minutes, not to production's volume.
 */
import { randomBytes } from 'node:crypto';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { type DeployedWebhooks, startDeployedWebhooks } from '../beds/deployed-webhooks.ts';
import type { MotoServer } from '../beds/moto-server.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../beds/webhook-receiver.ts';
import { createLogger } from '../functions/shared/platform/logger.ts';
import { newEndpointId } from '../functions/webhook-endpoints/endpoint.ts';
import { putNewEndpoint } from '../functions/webhook-endpoints/endpoint-changes.ts';
import { endpointSubscriberName } from '../functions/webhook-endpoints/endpoint-subscriptions.ts';
import { deployedUrlPolicy } from '../functions/webhook-endpoints/endpoint-url.ts';
import { percentile, round } from './statistics.ts';

export interface RetrySimulationOptions {
  readonly moto: MotoServer;
  /** The Retries queue's own emulator (SQS scales each queue on its own; one moto does not). */
  readonly retryMoto: MotoServer;
  /** The DynamoDB Local the plants table is made in. */
  readonly dynamoDbUrl: string;
  /** Events waiting for the dead subscriber before the live traffic starts. */
  readonly pending: number;
  /** Live events, created one every `intervalMilliseconds`. */
  readonly live: number;
  readonly intervalMilliseconds?: number;
  /** The compressed schedule, seconds. */
  readonly retrySchedule?: readonly number[];
  readonly maximumDelaySeconds?: number;
  /** Webhook endpoints registered beside the live subscriber; the dead one is one of them. */
  readonly endpoints?: number;
}

export interface RetryRunFigures {
  /** From the plant's write to the live subscriber's receipt, ms. */
  readonly liveDelay: { readonly p50: number; readonly p99: number; readonly max: number };
  readonly liveDelivered: number;
  /** The most messages in flight on the delivery and retry queues at any sample. */
  readonly maxInFlight: number;
  /** What the pollers can hold at once: their number times the batch size. */
  readonly inFlightBound: number;
  /** How long after it was due each of the dead subscriber's retries was made, ms. */
  readonly retryLateness?: {
    readonly min: number;
    readonly p50: number;
    readonly p99: number;
    readonly max: number;
  };
  /** Distinct events dead-lettered (the dead subscriber's, all of them). */
  readonly deadLettered?: number;
  readonly seconds: number;
}

export interface RetrySimulationFigures {
  readonly pending: number;
  readonly live: number;
  /** Webhook endpoints beside the live subscriber (the dead subscriber one of them), or 0. */
  readonly endpoints: number;
  readonly retrySchedule: readonly number[];
  readonly maximumDelaySeconds: number;
  readonly withoutDeadSubscriber: RetryRunFigures;
  readonly withDeadSubscriber: RetryRunFigures;
}

/** Runs without, then with, the dead subscriber, and reports both. */
export async function simulateDeadSubscriber(
  options: RetrySimulationOptions,
): Promise<RetrySimulationFigures> {
  const retrySchedule = options.retrySchedule ?? [2, 4, 8];
  const maximumDelaySeconds = options.maximumDelaySeconds ?? 4;
  const withoutDeadSubscriber = await run(
    { ...options, retrySchedule, maximumDelaySeconds },
    false,
  );
  const withDeadSubscriber = await run({ ...options, retrySchedule, maximumDelaySeconds }, true);
  return {
    pending: options.pending,
    live: options.live,
    endpoints: options.endpoints ?? 0,
    retrySchedule,
    maximumDelaySeconds,
    withoutDeadSubscriber,
    withDeadSubscriber,
  };
}

type RunOptions = RetrySimulationOptions & {
  readonly retrySchedule: readonly number[];
  readonly maximumDelaySeconds: number;
};

/** Pollers on the delivery queue and on the retry queue, each taking batches of 10. */
const deliveryConcurrency = 4;
const retryConcurrency = 4;

/** One run: the bed, the receivers, the backlog, the live events, then the dead letters. */
async function run(options: RunOptions, withDead: boolean): Promise<RetryRunFigures> {
  const started = Date.now();
  const { webhooks, lines, ports } = await startBed(options, withDead);
  const receivers: WebhookReceiver[] = [];
  let inFlight: InFlightSampler | undefined;
  try {
    const live = await startWebhookReceiver(webhooks.secret, ports.live);
    receivers.push(live);
    const dead = withDead ? await startWebhookReceiver(webhooks.secret, ports.dead) : undefined;
    if (dead !== undefined) {
      receivers.push(dead);
      dead.setMode('fail');
    }
    let deadSubscriber = 'dead';
    if ((options.endpoints ?? 0) > 0) {
      const healthy = await startWebhookReceiver(webhooks.secret);
      receivers.push(healthy);
      const ids = await registerEndpoints(webhooks, options.endpoints ?? 0, healthy.url, dead?.url);
      deadSubscriber = endpointSubscriberName(ids.at(-1) ?? '');
    }
    inFlight = sampleInFlight(webhooks);
    const delays = await liveDelays(options, webhooks, live);
    const total = options.pending + options.live;
    const deadLettered =
      dead === undefined ? undefined : await countDeadLetters(options, webhooks, total);
    const maxInFlight = await inFlight.stop();
    return {
      liveDelay: {
        p50: round(percentile(delays, 0.5)),
        p99: round(percentile(delays, 0.99)),
        max: round(delays.at(-1) ?? 0),
      },
      liveDelivered: live.accepted().size,
      maxInFlight,
      inFlightBound: (deliveryConcurrency + retryConcurrency) * 10,
      ...(dead === undefined ? {} : { retryLateness: latenessOf(lines, deadSubscriber) }),
      ...(deadLettered === undefined ? {} : { deadLettered }),
      seconds: round((Date.now() - started) / 1000),
    };
  } catch (error) {
    // What the functions last logged as failing says more than a timeout does.
    const failures = lines
      .filter((line) => line.level === 'error')
      .slice(-3)
      .map((line) => `${line.message}: ${JSON.stringify(line.failure ?? line.error ?? '')}`);
    throw new Error(`${(error as Error).message}; last failures: ${failures.join('; ')}`, {
      cause: error,
    });
  } finally {
    await inFlight?.stop().catch(() => {});
    for (const receiver of receivers) await receiver.stop();
    await webhooks.stop();
  }
}

/**
 * The deployed webhook path's bed, its subscribers on two ports found free (the receivers start
 * on them once the bed has made the secret), and the log lines its functions write.
 */
async function startBed(options: RunOptions, withDead: boolean) {
  const endpointCount = options.endpoints ?? 0;
  const placeholder = `whsec_${randomBytes(32).toString('base64')}`;
  const probes = await Promise.all([
    startWebhookReceiver(placeholder),
    startWebhookReceiver(placeholder),
  ]);
  const [live, dead] = probes.map((probe) => Number(new URL(probe.url).port));
  await Promise.all(probes.map((probe) => probe.stop()));
  const lines: Record<string, unknown>[] = [];
  const webhooks = await startDeployedWebhooks({
    moto: options.moto,
    retryMoto: options.retryMoto,
    dynamoDbUrl: options.dynamoDbUrl,
    logger: createLogger({}, (line) => lines.push(JSON.parse(line))),
    retrySchedule: options.retrySchedule,
    maximumDelaySeconds: options.maximumDelaySeconds,
    subscriberTimeoutMilliseconds: 2_000,
    deliveryConcurrency,
    retryConcurrency,
    subscribers: [
      { name: 'live', url: `http://127.0.0.1:${live}/` },
      ...(withDead && endpointCount === 0
        ? [{ name: 'dead', url: `http://127.0.0.1:${dead}/` }]
        : []),
    ],
    // The deployed URL policy, but that the receivers are on this machine's loopback.
    ...(endpointCount === 0
      ? {}
      : {
          endpoints: { urlPolicy: { ...deployedUrlPolicy, httpsOnly: false, allowLoopback: true } },
        }),
  });
  return { webhooks, lines, ports: { live: live as number, dead: dead as number } };
}

interface InFlightSampler {
  /** Ends the sampling; the most messages in flight seen. */
  stop(): Promise<number>;
}

/** Samples the messages in flight on the delivery and retry queues every 200 ms. */
function sampleInFlight(webhooks: DeployedWebhooks): InFlightSampler {
  let sampling = true;
  let maxInFlight = 0;
  const sampler = (async () => {
    while (sampling) {
      maxInFlight = Math.max(maxInFlight, await webhooks.inFlight());
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  return {
    stop: async () => {
      sampling = false;
      await sampler;
      return maxInFlight;
    },
  };
}

/**
 * Writes the backlog and waits until the live subscriber has it (only the later events are
 * measured), then one live event every `intervalMilliseconds`: each one's delay, write to
 * receipt, in ms, sorted.
 */
async function liveDelays(
  options: RunOptions,
  webhooks: DeployedWebhooks,
  live: WebhookReceiver,
): Promise<number[]> {
  const backlog = Array.from({ length: options.pending }, (_, index) => BigInt(index + 1));
  await putPlants(webhooks, backlog);
  await live.waitForAccepted(backlog.length, 600_000);
  const writtenAt = new Map<string, number>();
  for (let index = 0; index < options.live; index += 1) {
    const id = BigInt(1_000_000 + index);
    await putPlants(webhooks, [id]);
    writtenAt.set(`{"id":${id},"name":"Plant ${id}"}`, Date.now());
    await new Promise((resolve) => setTimeout(resolve, options.intervalMilliseconds ?? 50));
  }
  await live.waitForAccepted(options.pending + options.live, 600_000);
  return [...live.accepted().values()]
    .filter((delivery) => writtenAt.has(delivery.body))
    .map((delivery) => delivery.receivedAt - (writtenAt.get(delivery.body) ?? 0))
    .sort((a, b) => a - b);
}

/** Stores plants with these ids, 25 to a batch write. */
async function putPlants(webhooks: DeployedWebhooks, ids: readonly bigint[]): Promise<void> {
  for (let start = 0; start < ids.length; start += 25) {
    await webhooks.table.documentClient.send(
      new BatchWriteCommand({
        RequestItems: {
          [webhooks.table.tableName]: ids.slice(start, start + 25).map((id) => ({
            PutRequest: { Item: { id, name: `Plant ${id}` } },
          })),
        },
      }),
    );
  }
}

/**
 * Waits until `total` distinct events were dead-lettered (at most 15 minutes) and answers how
 * many were: delivery is at least once, so a letter may come twice.
 */
async function countDeadLetters(
  options: RunOptions,
  webhooks: DeployedWebhooks,
  total: number,
): Promise<number> {
  const letters = new Set<string>();
  const deadline = Date.now() + 900_000;
  while (letters.size < total && Date.now() < deadline) {
    const { Messages = [] } = await options.moto.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: webhooks.deadLetterQueueUrl,
        MaxNumberOfMessages: 10,
        VisibilityTimeout: 900,
        WaitTimeSeconds: 1,
      }),
    );
    for (const message of Messages) {
      const letter = JSON.parse(message.Body ?? '{}') as { webhookId?: string };
      letters.add(String(letter.webhookId));
    }
  }
  return letters.size;
}

/** How late each of the dead subscriber's retries was made, from the delivery's own log lines. */
function latenessOf(lines: readonly Record<string, unknown>[], subscriber: string) {
  const lateness = lines
    .filter((line) => line.subscriber === subscriber && Number(line.attempt) > 1)
    .map((line) => Number(line.lateMilliseconds))
    .sort((a, b) => a - b);
  return {
    min: round(lateness[0] ?? 0),
    p50: round(percentile(lateness, 0.5)),
    p99: round(percentile(lateness, 0.99)),
    max: round(lateness.at(-1) ?? 0),
  };
}

/**
 * Registers `count` endpoints as the create function stores them (a KMS-sealed secret, the
 * receivers' shared one), eight at a time: all at `healthyUrl` (each its own path) but the last,
 * which is at `deadUrl` when there is one. Answers their ids, in order.
 */
async function registerEndpoints(
  webhooks: DeployedWebhooks,
  count: number,
  healthyUrl: string,
  deadUrl: string | undefined,
): Promise<string[]> {
  const stores = webhooks.endpoints;
  if (stores === undefined) throw new Error('the bed has no endpoint stores');
  const ids = Array.from({ length: count }, () => newEndpointId(Date.now()));
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next;
      next += 1;
      const id = ids[index] as string;
      await putNewEndpoint(
        {
          id,
          owner: `bench-client-${Math.floor(index / 50)}`,
          url: index === count - 1 && deadUrl !== undefined ? deadUrl : `${healthyUrl}/${index}`,
          events: ['plant.created'],
          format: 'event',
          enabled: true,
          createdAt: new Date().toISOString(),
          version: 1,
          secret: await stores.secretBox.seal(webhooks.secret, id),
        },
        stores.stores,
      );
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return ids;
}
