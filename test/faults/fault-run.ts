/**
 * `npm run test:faults [-- --seed <n>] [--seconds <s>]`: the fault-injection tier. `npm start`
 * runs on DynamoDB Local behind a proxy that can pause or slow it; three endpoints hear plant
 * events at receivers that verify every signature; clients create, change and delete plants,
 * change endpoints and recover them, while faults strike at seeded moments (`fault-plan.ts`):
 * the store paused or slowed, the queues refusing sends, a receiver hanging past the delivery
 * timeout, `npm start` killed with SIGKILL and started again on its data. Then the checker
 * (`invariants.ts`) holds the promises; the run prints its seed and figures, and exits 1 when
 * one is broken. Every server binds to 127.0.0.1 and is stopped at the end.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startFaultProxy } from '../../beds/fault-proxy.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../beds/webhook-receiver.ts';
import { startDynamoDbLocal } from '../../local/dynamodb-local.ts';
import {
  loadOrCreateLocalKeys,
  localKeysDirectory,
  signLocalToken,
} from '../../local/token-issuer.ts';
import { type Fault, planFaults } from './fault-plan.ts';
import { checkInvariants, type FaultClient, type RunEndpoint } from './invariants.ts';
import { freePort, startNpmStartProcess } from './npm-start-process.ts';

const { values } = parseArgs({
  options: {
    seed: { type: 'string' },
    seconds: { type: 'string', default: '40' },
    // The queue's visibility timeout (3 minutes: a message whose handling failed comes back then),
    // the run's retry schedule (a minute in all), and a margin for a busy machine.
    'drain-seconds': { type: 'string', default: '300' },
  },
});
const seed = values.seed === undefined ? randomInt(0, 2 ** 31) : Number(values.seed);
const seconds = Number(values.seconds);
const drainSeconds = Number(values['drain-seconds']);
console.info(
  `fault run: seed ${seed}, ${seconds} s of workload (replay: npm run test:faults -- --seed ${seed})`,
);

const work = mkdtempSync(join(tmpdir(), 'plant-store-faults-'));
const storeCredentials = {
  AWS_ACCESS_KEY_ID: 'faults',
  AWS_SECRET_ACCESS_KEY: 'faults',
  AWS_REGION: 'us-east-1',
};
const stops: (() => Promise<unknown>)[] = [];
let failed = true;
try {
  const store = await startDynamoDbLocal({});
  stops.push(() => store.stop());
  const proxy = await startFaultProxy(store.url);
  stops.push(() => proxy.stop());
  const refuseFile = join(work, 'refuse-sends');
  const environment = {
    ...process.env,
    ...storeCredentials,
    PORT: String(await freePort()),
    DYNAMODB_ENDPOINT: proxy.url,
    PLANT_STORE_DATA_DIR: join(work, 'data'),
    THROTTLING: 'off',
    HOT_RELOAD: 'off',
    WEBHOOK_RETRY_SCHEDULE: '1,2,4,8,15,30',
    QUEUE_FAULT_FILE: refuseFile,
  };
  const api = await startNpmStartProcess(environment);
  stops.push(() => api.stop());
  const keys = loadOrCreateLocalKeys(localKeysDirectory(environment));
  const client: FaultClient = {
    url: api.url,
    writer: signLocalToken(keys, { scope: 'plants/read plants/write', expiresInSeconds: 7200 }),
    manager: signLocalToken(keys, {
      scope: 'webhooks/manage plants/read',
      subject: 'fault-client',
      expiresInSeconds: 7200,
    }),
  };

  const receivers: WebhookReceiver[] = [];
  for (let index = 0; index < 3; index += 1) {
    const receiver = await startWebhookReceiver(`whsec_${randomBytes(32).toString('base64')}`);
    receivers.push(receiver);
    stops.push(() => receiver.stop());
  }
  const plan = planFaults(seed, seconds, receivers.length, 20_000);
  const endpoints: RunEndpoint[] = [];
  const settings = [
    { events: ['plant.created', 'plant.updated', 'plant.deleted'], format: 'event' },
    { events: ['plant.created'], format: 'plant' },
    { events: ['plant.updated', 'plant.deleted'], format: 'event' },
  ];
  const runner = await import('./workload.ts');
  for (const [index, receiver] of receivers.entries()) {
    endpoints.push(await runner.registerEndpoint(client, receiver, settings[index] ?? {}));
  }

  const injected = new Map<Fault['kind'], number>();
  const faults = runner.faultInjector({
    proxy,
    refuseFile,
    receivers,
    kill: async (restartAfter) => {
      await api.kill();
      await new Promise((resolve) => setTimeout(resolve, restartAfter));
      await api.start();
    },
    writeFile: (path) => writeFileSync(path, ''),
    removeFile: (path) => rmSync(path, { force: true }),
  });
  const started = Date.now();
  const timers = plan.faults.map((fault) =>
    setTimeout(() => {
      injected.set(fault.kind, (injected.get(fault.kind) ?? 0) + 1);
      void faults.inject(fault);
    }, fault.at),
  );
  const answers = await runner.runWorkload(client, endpoints, plan.operations, seconds * 1000);
  for (const timer of timers) clearTimeout(timer);
  await faults.endAll();
  console.info(
    `workload done in ${((Date.now() - started) / 1000).toFixed(1)} s; faults: ${JSON.stringify(Object.fromEntries(injected))}`,
  );

  const report = await checkInvariants({
    client,
    endpoints,
    storeUrl: store.url,
    credentials: storeCredentials,
    answers,
    drainMilliseconds: drainSeconds * 1000,
  });
  console.info(
    JSON.stringify({ seed, seconds, faults: Object.fromEntries(injected), ...report.figures }),
  );
  for (const violation of report.violations) console.error(`broken: ${violation}`);
  if (report.violations.length > 0) {
    // What `npm start` logged at error level (its last 50 KB): the cause of a 5xx, for the record.
    const errors = api
      .output()
      .split('\n')
      .filter((line) => line.includes('"level":"error"'));
    for (const line of errors.slice(-10)) console.error(`npm start: ${line.slice(0, 2000)}`);
  }
  console.info(`faults: ${report.passed} passed, ${report.failed} failed`);
  failed = report.failed > 0;
  if (failed) console.error(`replay: npm run test:faults -- --seed ${seed} --seconds ${seconds}`);
} catch (error) {
  console.error(error);
} finally {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  rmSync(work, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
