/**
 * New-plant webhooks under load: 1,000 creates from 20 clients through the local API on
 * DynamoDB Local, once without webhooks and once with a live receiver on 127.0.0.1, in
 * alternation (twice each) so both see the same machine. Reports how long each webhook took
 * from the create's answer to the receiver, and what the webhooks cost the creates.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../functions/shared/platform/logger.ts';
import { startLocalApi } from '../local/local-api.ts';
import { percentile, round } from './statistics.ts';

export interface WebhookLoadFigures {
  readonly creates: number;
  readonly clients: number;
  /** Create latency in ms (p50, p99), each side over its runs. */
  readonly createWithoutWebhooks: { readonly p50: number; readonly p99: number };
  readonly createWithWebhooks: { readonly p50: number; readonly p99: number };
  /** From the create's 200 to the receiver's receipt, in ms. */
  readonly deliveryDelay: { readonly p50: number; readonly p99: number; readonly max: number };
  /** Distinct plants received per run with webhooks (each must equal `creates`). */
  readonly distinctDeliveries: readonly number[];
}

export async function measureWebhookLoad({ creates = 1_000, clients = 20, runs = 2 } = {}) {
  const without: number[] = [];
  const withWebhooks: number[] = [];
  const delays: number[] = [];
  const distinctDeliveries: number[] = [];
  for (let run = 0; run < runs; run++) {
    without.push(...(await runCreates({ creates, clients, webhooks: false })).latencies);
    const measured = await runCreates({ creates, clients, webhooks: true });
    withWebhooks.push(...measured.latencies);
    delays.push(...measured.delays);
    distinctDeliveries.push(measured.distinct);
  }
  const summary = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return { p50: round(percentile(sorted, 0.5)), p99: round(percentile(sorted, 0.99)) };
  };
  const sortedDelays = [...delays].sort((a, b) => a - b);
  return {
    creates,
    clients,
    createWithoutWebhooks: summary(without),
    createWithWebhooks: summary(withWebhooks),
    deliveryDelay: {
      ...summary(delays),
      max: round(sortedDelays.at(-1) ?? Number.NaN),
    },
    distinctDeliveries,
  } satisfies WebhookLoadFigures;
}

async function runCreates(options: { creates: number; clients: number; webhooks: boolean }) {
  // Plant id → when its webhook first arrived.
  const received = new Map<number, number>();
  const receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      const id = (JSON.parse(body) as { id: number }).id;
      if (!received.has(id)) received.set(id, performance.now());
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const keysDirectory = mkdtempSync(join(tmpdir(), 'plant-store-bench-webhooks-'));
  try {
    const { port } = receiver.address() as AddressInfo;
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const api = await startLocalApi({
      port: 0,
      keysDirectory,
      throttlingStage: 'off',
      logger: createLogger({}, () => {}),
      ...(options.webhooks
        ? {
            webhooks: {
              subscribers: [{ name: 'bench', url: `http://127.0.0.1:${port}/`, secret }],
            },
          }
        : {}),
    });
    try {
      const authorization = `Bearer ${api.signToken()}`;
      const latencies: number[] = [];
      const answeredAt = new Map<number, number>();
      let next = 0;
      const client = async () => {
        while (next < options.creates) {
          next += 1;
          const id = next;
          const started = performance.now();
          const response = await fetch(`${api.url}/plants`, {
            method: 'POST',
            headers: { authorization, 'content-type': 'application/json' },
            body: `{"id":${id},"name":"Plant ${id}"}`,
          });
          await response.arrayBuffer();
          if (response.status !== 200) throw new Error(`create answered ${response.status}`);
          const answered = performance.now();
          latencies.push(answered - started);
          answeredAt.set(id, answered);
        }
      };
      await Promise.all(Array.from({ length: options.clients }, client));
      if (!options.webhooks) return { latencies, delays: [], distinct: 0 };
      const deadline = performance.now() + 30_000;
      while (received.size < options.creates && performance.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const delays = [...received].map(
        ([id, arrival]) => arrival - (answeredAt.get(id) ?? Number.NaN),
      );
      return { latencies, delays, distinct: received.size };
    } finally {
      await api.stop();
    }
  } finally {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
    rmSync(keysDirectory, { recursive: true, force: true });
  }
}
