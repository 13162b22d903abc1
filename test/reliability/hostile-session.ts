/**
 * A hostile client's session against the local API in its own process: the process and its
 * table, what the clients were told is stored, every body and credential sent, and the audit
 * that ends each hostile-input file (the table holds exactly what was acknowledged, the logs
 * none of what was sent, the process still runs).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestTable, type TestTable } from '../support/test-store.ts';
import { type ApiProcess, startApiProcess, unthrottled } from './api-process.ts';
import { findLogLeaks } from './log-audit.ts';
import { expectContractShape } from './plant-client.ts';
import type { RawAnswer } from './raw-request.ts';
import { auditStore, cleanAudit, type ExpectedPlant, scanStoredItems } from './stored-plants.ts';

/** One seed for every property, so a failure replays exactly (fast-check prints the path too). */
export const seed = 7_2025;

export interface HostileSession {
  readonly api: ApiProcess;
  readonly token: string;
  readonly table: TestTable;
  /** What the clients were told is stored, by exact id text. */
  readonly acknowledged: Map<string, ExpectedPlant>;
  /** Every body and Authorization value sent, for the log check. */
  readonly sent: string[];
  /** Counts hostile requests for the summary line. */
  countCase(count?: number): void;
  /** How many were counted. */
  readonly cases: number;
}

/** Starts the session before the file's tests and stops it after; the result is live. */
export function useHostileSession(): HostileSession {
  let api: ApiProcess | undefined;
  let token = '';
  let table: TestTable | undefined;
  let cases = 0;
  const acknowledged = new Map<string, ExpectedPlant>();
  const sent: string[] = [];
  beforeAll(async () => {
    table = await createTestTable();
    api = await startApiProcess({
      storeUrl: table.url,
      tableName: table.tableName,
      throttling: unthrottled,
    });
    token = api.signToken();
    sent.push(token);
  });
  afterAll(async () => {
    await api?.stop();
    await table?.remove();
  });
  const session: HostileSession = {
    get api() {
      if (api === undefined) throw new Error('the session has not started');
      return api;
    },
    get token() {
      return token;
    },
    get table() {
      if (table === undefined) throw new Error('the session has not started');
      return table;
    },
    acknowledged,
    sent,
    countCase: (count = 1) => {
      cases += count;
    },
    get cases() {
      return cases;
    },
  };
  return session;
}

/** A unique valid plant, for the header cases. */
export function uniquePlant(): { id: bigint; body: string; plant: ExpectedPlant } {
  const id = BigInt(`0x${randomUUID().replaceAll('-', '').slice(0, 15)}`);
  const plant = { name: `Header case ${id}` };
  return { id, body: `{"id":${id},"name":${JSON.stringify(plant.name)}}`, plant };
}

/** Checks a raw answer: never 5xx, the contract's shape, and remembers what it acknowledged. */
export function recordRawAnswer(
  session: HostileSession,
  answer: RawAnswer,
  id: bigint,
  plant: ExpectedPlant,
): void {
  session.countCase();
  expect(answer.status).toBeLessThan(500);
  expectContractShape(answer);
  if (answer.status === 200) {
    expect(answer.body).toEqual(plant);
    session.acknowledged.set(String(id), plant);
  }
}

/**
 * The audit that ends a hostile-input file, after its other tests: the table holds exactly what
 * was acknowledged (at least `minimumAcknowledged` plants, so that it checks something), the logs
 * none of what was sent, and the process still runs.
 */
export function describeAudit(session: HostileSession, minimumAcknowledged: number): void {
  describe('after the hostile requests', () => {
    it('the table holds exactly the plants the clients were told about, intact', async () => {
      const stored = await scanStoredItems(session.table.documentClient, session.table.tableName);
      expect(auditStore(stored, session.acknowledged)).toEqual(cleanAudit);
      expect(session.acknowledged.size).toBeGreaterThan(minimumAcknowledged);
      console.info(
        `${session.cases} hostile requests (seed ${seed}), no 5xx, ${session.acknowledged.size} plants acknowledged and stored intact, nothing else stored`,
      );
    });

    it('the logs hold no token, Authorization header or request body', () => {
      expect(findLogLeaks(session.api.outputLines, session.sent)).toEqual([]);
    });

    it('the API process is still running', () => {
      expect(session.api.isRunning()).toBe(true);
    });
  });
}
