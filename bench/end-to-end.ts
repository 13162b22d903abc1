/**
 * The local API end to end under concurrent load: autocannon against `startLocalApi` (the API
 * Gateway stand-in, the authorizer with its result cache, the functions) on DynamoDB Local.
 * First every request creates a new plant; then every request reads one of them
 * (`GET /plants/{id}`), then changes one (`PATCH /plants/{id}` with `If-Match: *` and a new tag,
 * so each is one conditional write); then, with the table filled to `listedPlants`, every
 * request reads a page of 100 (`GET /plants?limit=100`, one Scan of 101 items, from the start of
 * the table or from a cursor spread over it). The stage throttling is lifted, or it would be the
 * figure measured.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon, { type AutocannonRequest } from 'autocannon';
import { createLogger } from '../functions/shared/platform/logger.ts';
import { startLocalApi } from '../local/local-api.ts';
import { round } from './statistics.ts';

export interface LoadFigures {
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

export interface EndToEndFigures {
  readonly create: LoadFigures;
  /** `GET /plants/{id}` of a plant created above. */
  readonly read: LoadFigures;
  /** `PATCH /plants/{id}` of a plant created above, a new tag each time. */
  readonly update: LoadFigures;
  /** The change's p99 over a create's, from the same run. */
  readonly updateP99ToCreateP99: number;
  /** `GET /plants?limit=100` over `listedPlants` plants. */
  readonly listPage: LoadFigures & { readonly listedPlants: number };
  /** The list page's p99 over a create's, from the same run. */
  readonly listP99ToCreateP99: number;
}

/** Starts the local API on a free port, loads it, and stops everything, also on failure. */
export async function measureEndToEnd({
  connections = 10,
  durationSeconds = 10,
  warmUpSeconds = 2,
  listedPlants = 10_000,
} = {}): Promise<EndToEndFigures> {
  const keysDirectory = mkdtempSync(join(tmpdir(), 'plant-store-bench-'));
  try {
    const api = await startLocalApi({
      port: 0,
      keysDirectory,
      logger: createLogger({}, () => {}),
      throttlingStage: 'off',
    });
    try {
      const authorization = `Bearer ${api.signToken()}`;
      /** Warms up (the JIT, the store's first writes, the authorizer's cache), then measures. */
      const measure = async (request: AutocannonRequest): Promise<LoadFigures> => {
        const load = (duration: number) =>
          autocannon({ url: api.url, connections, duration, requests: [request] });
        await load(warmUpSeconds);
        return summarizeLoad(await load(durationSeconds), connections, durationSeconds);
      };
      let nextId = 0;
      const create = await measure({
        method: 'POST',
        path: '/plants',
        headers: { authorization, 'content-type': 'application/json' },
        setupRequest: (request) => {
          nextId += 1;
          return { ...request, body: `{"id":${nextId},"name":"Plant ${nextId}"}` };
        },
      });

      const created = nextId;
      const someId = () => 1 + Math.floor(Math.random() * created);
      const read = await measure({
        method: 'GET',
        headers: { authorization },
        setupRequest: (request) => ({ ...request, path: `/plants/${someId()}` }),
      });
      let change = 0;
      const update = await measure({
        method: 'PATCH',
        headers: { authorization, 'content-type': 'application/merge-patch+json', 'if-match': '*' },
        setupRequest: (request) => {
          change += 1;
          return { ...request, path: `/plants/${someId()}`, body: `{"tag":"t${change}"}` };
        },
      });

      await fillTable(api.url, authorization, nextId, listedPlants);
      // Pages from the start and from cursors spread over the table, as walking clients ask.
      const cursors = Array.from({ length: 50 }, (_, index) =>
        Buffer.from(String(Math.floor((index * listedPlants) / 50))).toString('base64url'),
      );
      let page = 0;
      const listPage = {
        ...(await measure({
          method: 'GET',
          headers: { authorization },
          setupRequest: (request) => {
            page += 1;
            const cursor = page % 2 === 0 ? '' : `&cursor=${cursors[page % cursors.length]}`;
            return { ...request, path: `/plants?limit=100${cursor}` };
          },
        })),
        listedPlants,
      };
      return {
        create,
        read,
        update,
        updateP99ToCreateP99: round(update.latencyP99 / create.latencyP99, 2),
        listPage,
        listP99ToCreateP99: round(listPage.latencyP99 / create.latencyP99, 2),
      };
    } finally {
      await api.stop();
    }
  } finally {
    rmSync(keysDirectory, { recursive: true, force: true });
  }
}

function summarizeLoad(
  result: Awaited<ReturnType<typeof autocannon>>,
  connections: number,
  durationSeconds: number,
): LoadFigures {
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
}

/** Creates plants through the API until the table holds `total` of them. */
async function fillTable(url: string, authorization: string, stored: number, total: number) {
  let nextId = stored;
  const worker = async () => {
    while (nextId < total) {
      nextId += 1;
      const response = await fetch(`${url}/plants`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        body: `{"id":${nextId},"name":"Plant ${nextId}","tag":"bench"}`,
      });
      if (response.status !== 200) throw new Error(`filling the table: ${response.status}`);
    }
  };
  await Promise.all(Array.from({ length: 10 }, worker));
}
