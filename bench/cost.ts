/**
 * `npm run cost`: what a million requests of each operation and a stored GB cost a month,
 * computed from the stack's own settings (memory sizes, log lines, the authorizer's cache, the
 * webhook parts) and the CPU time `npm run bench` measured (`.data/bench/results.json`; the
 * figures below are used when no run exists). Prices: AWS's public list prices for us-east-1,
 * arm64, on-demand, without free tiers; check them against the pricing pages before relying on
 * the totals. Prints a Markdown table, as docs/deploying.md shows it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Route, routeFunctionOf, routes } from '../functions/shared/http/routes.ts';
import { bundleLimits } from '../functions/shared/webhooks/delivery-message.ts';
import { defaultRetrySchedule } from '../functions/shared/webhooks/send-webhook.ts';
import { type FunctionSettings, functionSettings } from '../infra/function-settings.ts';
import { authorizerCacheSeconds } from '../infra/plants-api.ts';
import { deliveryBatchSize } from '../infra/webhook-pipeline-settings.ts';
import { repositoryRoot } from './bundles.ts';

/** US dollars, us-east-1 list prices (Lambda arm64, API Gateway REST first tier, DynamoDB on-demand). */
export const prices = {
  apiGatewayRestPerMillion: 3.5,
  lambdaRequestsPerMillion: 0.2,
  lambdaArmPerGbSecond: 0.0000133334,
  dynamoWriteRequestUnitsPerMillion: 0.625,
  dynamoReadRequestUnitsPerMillion: 0.125,
  dynamoStoragePerGbMonth: 0.25,
  dynamoPointInTimeRecoveryPerGbMonth: 0.2,
  logsIngestedPerGb: 0.5,
  logsStoredPerGbMonth: 0.03,
  sqsRequestsPerMillion: 0.4,
  eventBridgeSchedulerInvocationsPerMillion: 1,
  secretsManagerPerSecretMonth: 0.4,
  secretsManagerPerTenThousandCalls: 0.05,
  kmsKeyPerMonth: 1,
  kmsPerTenThousandRequests: 0.03,
  // AWS WAF (https://aws.amazon.com/waf/pricing/): a web ACL, each rule, each request inspected.
  wafWebAclPerMonth: 5,
  wafRulePerMonth: 1,
  wafRequestsPerMillion: 0.6,
} as const;

/** What the model assumes about traffic and AWS; each is printed with the table. */
export interface CostAssumptions {
  /** Requests one client token makes within the authorizer's cache TTL (300 s). */
  readonly requestsPerTokenPerCacheTtl: number;
  /** A DynamoDB round trip inside a region, added to the CPU time a function spends. */
  readonly dynamoRoundTripMilliseconds: number;
  /** How long a subscriber takes to answer a webhook. */
  readonly subscriberMilliseconds: number;
  readonly webhookSubscribers: number;
  /** One function log line and one access log line per request, with CloudWatch's overhead. */
  readonly logBytesPerRequest: number;
  /** A stored plant's size (DynamoDB counts 100 bytes of overhead per item). */
  readonly itemBytes: number;
  /**
   * CPU milliseconds per warm request in Lambda at 1,769 MB (one vCPU): per route (`POST
   * /plants`) for the API, per function for the others (`authorizer`, `deliverWebhook`…).
   */
  readonly cpuMillisecondsAtFullVcpu: Readonly<Record<string, number>>;
}

/** Used when no bench run exists: figures of an earlier run. */
export const defaultAssumptions: CostAssumptions = {
  requestsPerTokenPerCacheTtl: 100,
  dynamoRoundTripMilliseconds: 8,
  subscriberMilliseconds: 150,
  webhookSubscribers: 1,
  logBytesPerRequest: 1_000,
  itemBytes: 150,
  cpuMillisecondsAtFullVcpu: {
    'POST /plants': 0.7,
    'GET /plants': 1.5,
    'GET /plants/{id}': 0.6,
    'PUT /plants/{id}': 0.7,
    'PATCH /plants/{id}': 0.7,
    'DELETE /plants/{id}': 0.5,
    authorizer: 0.5,
    // bench/delivery-cpu.ts (npm run bench): medians of 1.85, 1.94 and 2.15 ms on 2026-11-28.
    deliverWebhook: 2,
    webhookFanout: 0.5,
  },
};

const fullVcpuMemoryMb = 1769;

/** An operation as the cost table names it: its route, `POST /plants`. */
type Operation = `${Route['method']} ${string}`;

function operationOf(route: Route): Operation {
  return `${route.method} ${route.path}`;
}

/** The function behind an operation. */
function functionOf(operation: Operation) {
  const [method, path] = operation.split(' ') as [Route['method'], string];
  return routeFunctionOf(method, path);
}

/** The operation that stores new plants, each of which every subscriber hears of. */
const createOperation: Operation = 'POST /plants';

/**
 * DynamoDB request units per operation, from the table actions its function may call: a write
 * (put, update or delete) is one write of the item; a page is one consistent Scan of 101 items;
 * a read alone is one consistent read of the item.
 */
function dynamoCost(operation: Operation, assumptions: CostAssumptions): number {
  const settings: FunctionSettings = functionSettings[functionOf(operation)];
  const actions = settings.tableActions ?? settings.endpointAccess?.tableActions ?? [];
  if (actions.some((action) => /PutItem|UpdateItem|DeleteItem/.test(action))) {
    return prices.dynamoWriteRequestUnitsPerMillion * Math.ceil(assumptions.itemBytes / 1024);
  }
  if (actions.includes('dynamodb:Scan')) {
    // Strongly consistent: one read unit per 4 KB scanned, 101 items (100 + the look-ahead).
    return (
      prices.dynamoReadRequestUnitsPerMillion * Math.ceil((101 * assumptions.itemBytes) / 4096)
    );
  }
  return prices.dynamoReadRequestUnitsPerMillion * Math.ceil(assumptions.itemBytes / 4096);
}

/** Lambda's cost of one million invocations of `name` lasting `milliseconds` each (rounded up). */
function lambdaCost(name: keyof typeof functionSettings, milliseconds: number): number {
  const gb = functionSettings[name].memorySizeMb / 1024;
  return (
    prices.lambdaRequestsPerMillion +
    1_000_000 * Math.ceil(milliseconds) * 0.001 * gb * prices.lambdaArmPerGbSecond
  );
}

/**
 * CPU time of an operation (or a function that serves none) at its function's memory size:
 * Lambda gives CPU in proportion to memory.
 */
export function cpuMilliseconds(
  name: Operation | Exclude<keyof typeof functionSettings, ReturnType<typeof functionOf>>,
  assumptions: CostAssumptions,
): number {
  const atFullVcpu = assumptions.cpuMillisecondsAtFullVcpu[name] ?? 1;
  const settings = name.includes(' ')
    ? functionSettings[functionOf(name as Operation)]
    : functionSettings[name as keyof typeof functionSettings];
  return atFullVcpu / Math.min(1, settings.memorySizeMb / fullVcpuMemoryMb);
}

export interface OperationCost {
  readonly operation: Operation;
  readonly apiGateway: number;
  readonly authorizer: number;
  readonly lambda: number;
  readonly dynamoDb: number;
  readonly logs: number;
  readonly webhooks: number;
  readonly total: number;
}

/** The cost of one million requests of each operation, in US dollars. */
export function estimateCosts(assumptions: CostAssumptions = defaultAssumptions): OperationCost[] {
  const operations = routes.map(operationOf);
  // One authorizer run per token per cache TTL (the cache holds the answer for every method).
  const authorizerShare = 1 / assumptions.requestsPerTokenPerCacheTtl;
  const authorizer =
    authorizerShare * lambdaCost('authorizer', cpuMilliseconds('authorizer', assumptions));
  const logs = (assumptions.logBytesPerRequest / 1e9) * 1e6 * prices.logsIngestedPerGb;
  return operations.map((operation) => {
    const lambda = lambdaCost(
      functionOf(operation),
      cpuMilliseconds(operation, assumptions) + assumptions.dynamoRoundTripMilliseconds,
    );
    // Every create stores a new plant at most once: one fan-out share, and per subscriber one
    // message sent, received and deleted, and one delivery invocation.
    const webhooks =
      operation === createOperation
        ? lambdaCost('webhookFanout', cpuMilliseconds('webhookFanout', assumptions) + 20) / 100 +
          assumptions.webhookSubscribers *
            (3 * prices.sqsRequestsPerMillion +
              lambdaCost(
                'deliverWebhook',
                cpuMilliseconds('deliverWebhook', assumptions) + assumptions.subscriberMilliseconds,
              ))
        : 0;
    const parts = {
      // The request, and the web ACL's inspection of it (per-client limits).
      apiGateway: prices.apiGatewayRestPerMillion + prices.wafRequestsPerMillion,
      authorizer,
      lambda,
      dynamoDb: dynamoCost(operation, assumptions),
      logs,
      webhooks,
    };
    const total = Object.values(parts).reduce((sum, value) => sum + value, 0);
    return { operation, ...parts, total };
  });
}

/** What a million webhook deliveries cost with retries waiting as delayed SQS messages. */
export interface RetryCosts {
  /** Messages one delivery that fails every attempt goes through: its attempts and its hops. */
  readonly messagesPerDeadDelivery: number;
  /** A million deliveries answered at the first attempt. */
  readonly deliveredFirstTime: number;
  /** A million deliveries that fail every attempt (a dead subscriber): SQS, then Lambda. */
  readonly deadSqs: number;
  readonly deadLambda: number;
  readonly dead: number;
  /** The same million with EventBridge Scheduler waiting instead (one schedule per retry). */
  readonly deadWithScheduler: number;
}

/**
 * The retry design's price. A delivery is one SQS message per attempt; a wait longer than SQS's
 * 15-minute maximum delay is a chain of hops, each one more message (sent, received, deleted:
 * three requests, an upper bound as receives and deletes are batched) and one more invocation
 * of the delivery function, which only re-sends it. A dead subscriber makes every delivery run
 * the whole schedule: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h.
 */
export function estimateRetryCosts(
  assumptions: CostAssumptions = defaultAssumptions,
  schedule: readonly number[] = defaultRetrySchedule,
): RetryCosts {
  const maximumDelaySeconds = 900;
  const hops = schedule.reduce((sum, wait) => sum + Math.ceil(wait / maximumDelaySeconds), 0);
  const attempts = schedule.length + 1;
  const messagesPerDeadDelivery = 1 + hops;
  const perMessageSqs = 3 * prices.sqsRequestsPerMillion;
  const cpu = cpuMilliseconds('deliverWebhook', assumptions);
  // An attempt waits for the subscriber; a hop waits only for its SQS send (a round trip).
  const attemptInvocation = lambdaCost('deliverWebhook', cpu + assumptions.subscriberMilliseconds);
  const hopInvocation = lambdaCost('deliverWebhook', cpu + assumptions.dynamoRoundTripMilliseconds);
  const deadSqs = messagesPerDeadDelivery * perMessageSqs;
  const deadLambda =
    attempts * attemptInvocation + (messagesPerDeadDelivery - attempts) * hopInvocation;
  const deadWithScheduler =
    schedule.length * prices.eventBridgeSchedulerInvocationsPerMillion +
    attempts * (perMessageSqs + attemptInvocation);
  return {
    messagesPerDeadDelivery,
    deliveredFirstTime: perMessageSqs + attemptInvocation,
    deadSqs,
    deadLambda,
    dead: deadSqs + deadLambda,
    deadWithScheduler,
  };
}

/** What self-service webhook endpoints cost at a number of them. */
export interface EndpointCosts {
  readonly endpoints: number;
  /** A month of their secrets: one Secrets Manager secret each, or one KMS key sealing them all. */
  readonly secretsManagerPerMonth: number;
  readonly kmsPerMonth: number;
  /** One event delivered to one endpoint: its message, the delivery, the endpoint's reads and log. */
  readonly perMillionDeliveries: number;
  /**
   * The fan-out's reads of who hears what: one strongly consistent read of the change count per
   * batch, a month of batches arriving without pause (one every 250 ms, the stream's polling),
   * and the whole list again after each change (not counted: changes are rare).
   */
  readonly endpointListPerMonth: number;
}

/** How a delivery invocation is filled: deliveries a queue message, messages an invocation. */
export interface DeliveryBatches {
  readonly deliveriesPerMessage: number;
  readonly messagesPerInvocation: number;
}

/** Full bundles in full batches, as the fan-out and the first attempts' mapping make them at load. */
export const fullDeliveryBatches: DeliveryBatches = {
  deliveriesPerMessage: bundleLimits.messages,
  messagesPerInvocation: deliveryBatchSize,
};

/**
 * The endpoints' running costs. Secrets: Secrets Manager bills each secret by the month; a KMS
 * key bills once, and the endpoints' secrets are sealed under the stage's data key, which a
 * container opens once in its life: no KMS request a delivery. A queue message is a bundle of one
 * endpoint's deliveries (sent, received, deleted: three requests), read once (a consistent read
 * of the endpoint); an invocation attempts its batch side by side, spending each delivery's CPU
 * and waiting once for its slowest receiver; each delivery writes its claim, its attempt and its
 * outcome to the log.
 */
export function estimateEndpointCosts(
  assumptions: CostAssumptions = defaultAssumptions,
  endpoints = 10_000,
  batches: DeliveryBatches = fullDeliveryBatches,
): EndpointCosts {
  const { deliveriesPerMessage: bundle, messagesPerInvocation } = batches;
  const perInvocation = bundle * messagesPerInvocation;
  const invocation = lambdaCost(
    'deliverWebhook',
    perInvocation * cpuMilliseconds('deliverWebhook', assumptions) +
      assumptions.subscriberMilliseconds,
  );
  const perMillionDeliveries =
    (3 * prices.sqsRequestsPerMillion) / bundle +
    invocation / perInvocation +
    prices.dynamoReadRequestUnitsPerMillion / bundle +
    3 * prices.dynamoWriteRequestUnitsPerMillion;
  const batchesPerMonth = (30 * 24 * 3600) / 0.25;
  return {
    endpoints,
    secretsManagerPerMonth: endpoints * prices.secretsManagerPerSecretMonth,
    kmsPerMonth: prices.kmsKeyPerMonth,
    perMillionDeliveries,
    endpointListPerMonth: (batchesPerMonth * prices.dynamoReadRequestUnitsPerMillion) / 1_000_000,
  };
}

function describeEndpointCosts(costs: EndpointCosts): string[] {
  return [
    `Webhook endpoints, at ${costs.endpoints.toLocaleString('en-US')} of them:`,
    `- their secrets: ${dollars(costs.kmsPerMonth)} a month sealed by one KMS key (plus $0.03 per 10,000 openings), where a`,
    `  Secrets Manager secret each would cost ${dollars(costs.secretsManagerPerMonth)} a month: the key it is (docs/decisions/endpoint-secrets.md);`,
    `- a million deliveries to endpoints, in full bundles and batches: ${dollars(costs.perMillionDeliveries)} (SQS, the delivery, the endpoint read, the log writes);`,
    `- the fan-out's check of who hears what, one consistent read a batch while events arrive without pause: ${dollars(costs.endpointListPerMonth)} a month;`,
    '- every event is kept 7 days for recover: one write per event, whatever the number of endpoints.',
  ];
}

/**
 * The stage's own web ACL, which holds the per-client limits (`infra/token-limits.ts`): a month of
 * the ACL and its rules, and every request it inspects (included in the table's API Gateway
 * column). A stage that names an account's web ACL pays for its two rules there instead.
 */
export function webAclPerMonth(): number {
  return prices.wafWebAclPerMonth + 2 * prices.wafRulePerMonth;
}

function describeWebAclCosts(): string[] {
  return [
    `Per-client limits: the stage's web ACL costs ${dollars(webAclPerMonth())} a month (the ACL $${prices.wafWebAclPerMonth}, two rate-based rules $${prices.wafRulePerMonth} each)`,
    `and ${dollars(prices.wafRequestsPerMillion)} per million requests, counted in the API Gateway and WAF column above.`,
  ];
}

/** A stored GB a month: the table, its point-in-time recovery. */
export function storedGbPerMonth(): number {
  return prices.dynamoStoragePerGbMonth + prices.dynamoPointInTimeRecoveryPerGbMonth;
}

/** The measured CPU times of the last `npm run bench`, where it has them. */
function readBenchAssumptions(): CostAssumptions {
  const path = join(repositoryRoot, '.data', 'bench', 'results.json');
  if (!existsSync(path)) return defaultAssumptions;
  const results = JSON.parse(readFileSync(path, 'utf8')) as {
    apiFunctions?: {
      create?: {
        name: string;
        warmPath?: { figures?: Record<string, { cpuMicrosecondsPerRequest?: number }> };
      };
      others?: { name: string; warm?: { cpuMicrosecondsPerRequest?: number } }[];
    };
    deliveries?: { cpuMicrosecondsPerDelivery?: { median?: number } };
  };
  // Measured per function: each of its operations costs what the function does.
  const byFunction = new Map<string, number>();
  const create = results.apiFunctions?.create;
  const createCpu = Object.values(create?.warmPath?.figures ?? {})[0]?.cpuMicrosecondsPerRequest;
  if (create !== undefined && createCpu !== undefined) byFunction.set(create.name, createCpu);
  for (const entry of results.apiFunctions?.others ?? []) {
    const cpu = entry.warm?.cpuMicrosecondsPerRequest;
    if (cpu !== undefined) byFunction.set(entry.name, cpu);
  }
  const measured: Record<string, number> = { ...defaultAssumptions.cpuMillisecondsAtFullVcpu };
  for (const route of routes) {
    const cpu = byFunction.get(route.function);
    if (cpu !== undefined) measured[operationOf(route)] = cpu / 1000;
  }
  const delivery = results.deliveries?.cpuMicrosecondsPerDelivery?.median;
  if (delivery !== undefined) measured.deliverWebhook = delivery / 1000;
  return { ...defaultAssumptions, cpuMillisecondsAtFullVcpu: measured };
}

function describeRetryCosts(costs: RetryCosts): string[] {
  return [
    'Webhook retries, per million deliveries (a retry waits as a delayed SQS message, in hops of',
    "at most 15 minutes, so it is never in flight: one dead subscriber cannot fill the queue's",
    '~120,000 in-flight messages and stall the others):',
    `- answered at the first attempt: ${dollars(costs.deliveredFirstTime)} (one message, one invocation);`,
    `- failing every attempt (a dead subscriber, the whole schedule): ${dollars(costs.dead)} (${costs.messagesPerDeadDelivery} messages: SQS ${dollars(costs.deadSqs)}, Lambda ${dollars(costs.deadLambda)});`,
    `- the same with EventBridge Scheduler waiting instead: ${dollars(costs.deadWithScheduler)}. Cheaper while a subscriber is dead, but a`,
    '  schedule per retry to create and clean up, another service, role and quota, and nothing here to test it on.',
  ];
}

function dollars(value: number): string {
  return `$${value.toFixed(value < 1 ? 3 : 2)}`;
}

function main(): void {
  const assumptions = readBenchAssumptions();
  const rows = estimateCosts(assumptions);
  const lines = [
    '| per million requests | API Gateway and WAF | authorizer | Lambda | DynamoDB | logs | webhooks | total |',
    '|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (row) =>
        `| ${row.operation} | ${[row.apiGateway, row.authorizer, row.lambda, row.dynamoDb, row.logs, row.webhooks, row.total].map(dollars).join(' | ')} |`,
    ),
    '',
    `Stored data: ${dollars(storedGbPerMonth())} per GB-month (table and point-in-time recovery); logs kept: ${dollars(prices.logsStoredPerGbMonth)} per GB-month.`,
    '',
    ...describeWebAclCosts(),
    '',
    'Assumptions:',
    `- ${assumptions.requestsPerTokenPerCacheTtl} requests per token within the authorizer's ${authorizerCacheSeconds} s cache; a ${assumptions.dynamoRoundTripMilliseconds} ms DynamoDB round trip; ${assumptions.webhookSubscribers} webhook subscriber answering in ${assumptions.subscriberMilliseconds} ms; ${assumptions.logBytesPerRequest} bytes of logs per request; ${assumptions.itemBytes}-byte plants.`,
    `- CPU ms per request at one vCPU: ${Object.entries(assumptions.cpuMillisecondsAtFullVcpu)
      .map(([name, value]) => `${name} ${value.toFixed(2)}`)
      .join(
        ', ',
      )} (${existsSync(join(repositoryRoot, '.data', 'bench', 'results.json')) ? 'from the last npm run bench' : 'defaults; run npm run bench to measure'}), scaled to each function's memory.`,
    '- X-Ray traces (1 request/s and 5 % beyond, $5 per million recorded) and the alarms ($0.10 each a month) are not per request and not included.',
    '',
    ...describeRetryCosts(estimateRetryCosts(assumptions)),
    '',
    ...describeEndpointCosts(estimateEndpointCosts(assumptions)),
  ];
  console.log(lines.join('\n'));
}

if (import.meta.main) main();
