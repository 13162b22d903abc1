/**
 * The local API end to end under concurrent load: autocannon against `startLocalApi` (the API
 * Gateway stand-in, the authorizer with its result cache, create-plant) storing into DynamoDB
 * Local. Every request creates a new plant. The stage throttling is lifted, or it would be the
 * figure measured.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { createLogger } from '../functions/shared/logger.ts';
import { startLocalApi } from '../local/local-api.ts';
import { round } from './statistics.ts';

export interface EndToEndFigures {
  readonly connections: number;
  readonly durationSeconds: number;
  readonly requestsPerSecond: number;
  /** Latency in milliseconds, as autocannon measures it (request sent to response read). */
  readonly latencyP50: number;
  readonly latencyP99: number;
  /** Connection errors and timeouts. */
  readonly errors: number;
  /** Answers other than 2xx; each is a failed create. */
  readonly non2xx: number;
  readonly requests: number;
}

/** Starts the local API on a free port, loads it, and stops everything, also on failure. */
export async function measureEndToEnd({
  connections = 10,
  durationSeconds = 10,
  warmUpSeconds = 2,
} = {}): Promise<EndToEndFigures> {
  const keysDirectory = mkdtempSync(join(tmpdir(), 'plant-store-bench-'));
  try {
    const api = await startLocalApi({
      port: 0,
      keysDirectory,
      logger: createLogger({}, () => {}),
      gateway: { throttling: undefined },
    });
    try {
      const token = api.signToken();
      let nextId = 0;
      const load = (duration: number) =>
        autocannon({
          url: api.url,
          connections,
          duration,
          requests: [
            {
              method: 'POST',
              path: '/plants',
              headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
              setupRequest: (request) => {
                nextId += 1;
                return { ...request, body: `{"id":${nextId},"name":"Plant ${nextId}"}` };
              },
            },
          ],
        });
      await load(warmUpSeconds); // the JIT, the store's first writes and the authorizer's cache
      const result = await load(durationSeconds);
      return {
        connections,
        durationSeconds,
        requestsPerSecond: Math.round(result.requests.average),
        latencyP50: round(result.latency.p50),
        latencyP99: round(result.latency.p99),
        errors: result.errors + result.timeouts,
        non2xx: result.non2xx,
        requests: result.requests.total,
      };
    } finally {
      await api.stop();
    }
  } finally {
    rmSync(keysDirectory, { recursive: true, force: true });
  }
}
