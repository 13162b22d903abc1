/**
 * `npm run capacity`: what each AWS limit admits of a size of traffic (S, M, L, or one given by
 * flags), for `PlantStore-prod` as the code configures it: the settings are imported from the
 * CDK app's own modules, the AWS figures name their documentation page, and the traffic is a
 * declared assumption, printed with the table. A model on paper, not a measurement: it says which
 * limit breaks first and by how much. `--json` prints `{ "sizes": [ … ] }`.
 */
import { parseArgs } from 'node:util';
import {
  clientKeyBuckets,
  clientKeyCap,
  registrationSpacingMilliseconds,
} from '../functions/authorizer/client-keys.ts';
import { listSegments } from '../functions/list-plants/list-plants.ts';
import { defaultPageLimit } from '../functions/shared/http/paging.ts';
import { type Route, routes } from '../functions/shared/http/routes.ts';
import { bundleLimits } from '../functions/shared/webhooks/delivery-message.ts';
import { concurrentSendBatches } from '../functions/shared/webhooks/delivery-queue.ts';
import { functionSettings } from '../infra/function-settings.ts';
import { authorizerCacheSeconds } from '../infra/plants-api.ts';
import { defaultWebhookDeliveries, stages, type WebhookDeliveriesConfig } from '../infra/stages.ts';
import { isEndpointRoute, routeThrottling } from '../infra/throttling.ts';
import {
  deliveryBatchSize,
  deliveryMappingConcurrency,
  fanoutStreamSettings,
  mappingMaximumConcurrency,
  retryMaximumConcurrency,
} from '../infra/webhook-pipeline-settings.ts';
import {
  cpuMilliseconds,
  defaultAssumptions,
  estimateCosts,
  estimateEndpointCosts,
  prices,
} from './cost.ts';

/** AWS's figures, each with the page that states it (us-east-1 defaults). */
export const awsLimits = {
  /** "Amazon API Gateway quotas": throttle quota per account and Region, and its burst. */
  accountRequestsPerSecond: 10_000,
  /** "Amazon API Gateway quotas", creating, deploying and managing an API: not raisable. */
  controlPlaneCallsPerSecond: 10,
  /** "Quotas for configuring and running a REST API in API Gateway": API keys per account and Region. */
  apiKeysPerAccount: 10_000,
  /** "Lambda quotas": concurrent executions per account and Region (raisable). */
  lambdaConcurrency: 1_000,
  /** "Service, account, and table quotas in Amazon DynamoDB": per partition. */
  partitionWriteUnitsPerSecond: 1_000,
  partitionReadUnitsPerSecond: 3_000,
  /** The same page: an on-demand table's default maximum throughput (raisable). */
  tableWriteUnitsPerSecond: 40_000,
  tableReadUnitsPerSecond: 40_000,
  /** "AWS KMS request quotas": cryptographic operations (symmetric), shared, the lowest Region's. */
  kmsCryptographicPerSecond: 5_500,
  /** "Change data capture for DynamoDB Streams": a record is kept 24 hours. */
  streamRetentionHours: 24,
  /** "How Lambda scales with Amazon SQS event sources": the pollers an SQS mapping starts with. */
  sqsFirstPollers: 5,
} as const;

/** Round trips and durations the model assumes (measured on AWS by others, not here). */
export const latencies = {
  sqsBatchSendSeconds: 0.02,
  dynamoSeconds: 0.008,
  receiverSeconds: 0.15,
  authorizerWarmSeconds: 0.02,
  routeFunctionSeconds: 0.03,
  /**
   * How long a Lambda execution environment lives: AWS documents no figure ("Lambda execution
   * environment lifecycle": it is kept for later invocations and ended after a while); an hour.
   */
  containerLifeSeconds: 3600,
} as const;

/** The quotas of the account that Service Quotas raises, and a stage's first attempts. */
export interface Setup {
  readonly webhookDeliveries: WebhookDeliveriesConfig;
  readonly apiRequestsPerSecond: number;
  readonly lambdaConcurrency: number;
  readonly tableWriteUnitsPerSecond: number;
  readonly tableReadUnitsPerSecond: number;
}

/** `PlantStore-prod` as `infra/stages.ts` configures it, in an account of AWS's defaults. */
export const prodSetup: Setup = {
  webhookDeliveries: stages.prod.webhookDeliveries ?? defaultWebhookDeliveries,
  apiRequestsPerSecond: awsLimits.accountRequestsPerSecond,
  lambdaConcurrency: awsLimits.lambdaConcurrency,
  tableWriteUnitsPerSecond: awsLimits.tableWriteUnitsPerSecond,
  tableReadUnitsPerSecond: awsLimits.tableReadUnitsPerSecond,
};

/** One size of traffic. */
export interface Size {
  readonly name: string;
  readonly requestsPerSecond: number;
  readonly clients: number;
  readonly endpoints: number;
}

export const sizes: readonly Size[] = [
  { name: 'S', requestsPerSecond: 100, clients: 100, endpoints: 50 },
  { name: 'M', requestsPerSecond: 2_000, clients: 5_000, endpoints: 2_000 },
  { name: 'L', requestsPerSecond: 10_000, clients: 50_000, endpoints: 20_000 },
];

/**
 * The declared traffic: each plants route's share of requests (a read-heavy catalogue: reads of
 * one plant are half, pages of the default size the rest but one request in 200, a write), every
 * write an event, every endpoint hearing every event, one token per client an hour, each client
 * active within the authorizer's cache.
 */
export const routeMix: Readonly<Record<string, number>> = {
  'GET /plants/{id}': 0.5,
  'GET /plants': 0.495,
  'POST /plants': 0.003,
  'PATCH /plants/{id}': 0.001,
  'PUT /plants/{id}': 0.0005,
  'DELETE /plants/{id}': 0.0005,
};

/** A stored plant's size in DynamoDB (100 bytes of its overhead included), as `npm run cost` has it. */
const plantItemBytes = defaultAssumptions.itemBytes;
/** A delivery message's members besides its payload, in bytes. */
const deliveryMessageOverheadBytes = 300;

const plantsRoutes = routes.filter((route) => !isEndpointRoute(route));
const operationOf = (route: Route) => `${route.method} ${route.path}`;
const writes = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** What the model finds at one size. Money in USD. */
export interface SizeFigures extends Size {
  readonly stageBudgetPerSecond: number;
  readonly refusedShareUnderBudget: number;
  readonly eventsPerSecond: number;
  readonly deliveriesPerSecond: number;
  readonly streamShards: number;
  readonly fanoutSecondsPerBatch: number;
  readonly fanoutEventsPerSecond: number;
  readonly webhooksLostPerSecond: number;
  readonly controlPlaneCallsPerSecondAfterDeploy: number;
  /** While a stage adds keys (new, or past a deploy of the records): the pace's bound. */
  readonly controlPlaneCallsPerSecondAddingKeys: number;
  /** How long a new stage takes to add every key, its clients counted in buckets meanwhile. */
  readonly keysAddedInHours: number;
  readonly clientsWithoutKey: number;
  /** Clients counted in hashed buckets past the stage's key cap; a flooder slows 1/buckets of them. */
  readonly clientsInBuckets: number;
  readonly lambdaConcurrency: number;
  readonly deliveryConcurrency: number;
  readonly logTableWriteUnitsPerSecond: number;
  /** A consistent read of an endpoint per delivery invocation and bundle. */
  readonly endpointsTableReadUnitsPerSecond: number;
  readonly hottestKey: string;
  readonly hottestKeyShareOfPartition: number;
  readonly kmsDecryptPerSecond: number;
  readonly logGigabytesPerDay: number;
  readonly costPerMillionRequests: number;
  readonly costPerMillionDeliveries: number;
  /** The limits this size passes, first the worst. */
  readonly limitsHit: readonly string[];
  /** What the size needs that the setup lacks: `null` when it lacks nothing. */
  readonly needs: Setup | null;
  /** The limits it passes with them: none, or the model says what no raise lifts. */
  readonly limitsHitWithNeeds: readonly string[];
}

/**
 * The stage's throttling budget at a size: prod's, raised to twice the size's rate (its bursts)
 * as docs/api.md says.
 */
function stageBudget(size: Size) {
  const { rateLimit, burstLimit } = stages.prod.throttling;
  const raised = Math.max(rateLimit, 2 * size.requestsPerSecond);
  return { rateLimit: raised, burstLimit: Math.max(burstLimit, 2 * raised) };
}

/** Requests refused by the routes' own limits while the stage as a whole is within its budget. */
function refusedUnderBudget(size: Size): number {
  const budget = stageBudget(size);
  let refused = 0;
  for (const route of plantsRoutes) {
    const demand = size.requestsPerSecond * (routeMix[operationOf(route)] ?? 0);
    refused += Math.max(0, demand - routeThrottling(route, { plants: budget }).rateLimit);
  }
  return refused / size.requestsPerSecond;
}

/** The model at one size, for `PlantStore-prod` as configured, and what it needs. */
export function modelSize(size: Size): SizeFigures {
  const figures = modelSetup(size, prodSetup);
  const needs = needsOf(figures, prodSetup);
  return {
    ...figures,
    needs,
    limitsHitWithNeeds: needs === null ? figures.limitsHit : modelSetup(size, needs).limitsHit,
  };
}

/**
 * What a size needs, with a quarter's headroom, where the setup has less: deliveries' functions
 * (a queue per mapping's 1,000, shared evenly), the account's requests and concurrency (the
 * deliveries' maximum beside the rest), each table's units.
 */
function needsOf(figures: SetupFigures, setup: Setup): Setup | null {
  // Rounded to a millionth first: 100,000.00000000001 read units need 125,000, not 126,000.
  const up = (value: number, step: number) => Math.ceil(Number(value.toFixed(6)) / step) * step;
  const headroom = (value: number, step: number) => up(1.25 * value, step);
  const wanted = 1.25 * figures.deliveryDemand;
  const queues = Math.ceil(wanted / mappingMaximumConcurrency);
  const webhookDeliveries =
    figures.deliveryDemand > figures.deliveryMaximum
      ? { concurrency: up(wanted / queues, 10) * queues, queues }
      : setup.webhookDeliveries;
  const lambda = 1.25 * figures.otherConcurrency + webhookDeliveries.concurrency;
  const needs = {
    webhookDeliveries,
    apiRequestsPerSecond: Math.max(setup.apiRequestsPerSecond, figures.stageBudgetPerSecond),
    lambdaConcurrency: Math.max(setup.lambdaConcurrency, up(lambda, 1_000)),
    tableWriteUnitsPerSecond:
      figures.logTableWriteUnitsPerSecond > setup.tableWriteUnitsPerSecond
        ? headroom(figures.logTableWriteUnitsPerSecond, 1_000)
        : setup.tableWriteUnitsPerSecond,
    tableReadUnitsPerSecond:
      figures.endpointsTableReadUnitsPerSecond > setup.tableReadUnitsPerSecond
        ? headroom(figures.endpointsTableReadUnitsPerSecond, 1_000)
        : setup.tableReadUnitsPerSecond,
  };
  const same = (Object.keys(needs) as (keyof Setup)[]).every((key) => needs[key] === setup[key]);
  return same ? null : needs;
}

/**
 * What the model finds for one setup, and the functions the deliveries need (`deliveryDemand`),
 * may take (`deliveryMaximum`), and the others' beside them.
 */
type SetupFigures = Omit<SizeFigures, 'needs' | 'limitsHitWithNeeds'> & {
  readonly deliveryDemand: number;
  readonly deliveryMaximum: number;
  readonly otherConcurrency: number;
};

/** The model at one size, for a setup. */
function modelSetup(size: Size, setup: Setup): SetupFigures {
  const limitsHit: string[] = [];
  const refusedShareUnderBudget = refusedUnderBudget(size);
  if (refusedShareUnderBudget > 0) {
    limitsHit.push(
      `method split: ${percent(refusedShareUnderBudget)} refused under the stage's budget`,
    );
  }
  const writeShare = plantsRoutes
    .filter((route) => writes.has(route.method))
    .reduce((sum, route) => sum + (routeMix[operationOf(route)] ?? 0), 0);
  const eventsPerSecond = size.requestsPerSecond * writeShare;
  const deliveriesPerSecond = eventsPerSecond * size.endpoints;

  // The fan-out: a stream batch is one bundle per endpoint and ten events (`bundleLimits`), sent
  // ten to a batch, `concurrentSendBatches` batches at a time; `parallelizationFactor`
  // invocations per stream shard at a time. A batch holds about a second of its shard's events.
  const streamShards = Math.max(
    1,
    Math.ceil(eventsPerSecond / awsLimits.partitionWriteUnitsPerSecond),
  );
  const bundleSize = Math.min(
    bundleLimits.messages,
    Math.floor(bundleLimits.bodyBytes / (plantItemBytes + deliveryMessageOverheadBytes)),
  );
  const fanoutSecondsFor = (events: number) =>
    (Math.ceil((size.endpoints * Math.ceil(events / bundleSize)) / 10) / concurrentSendBatches) *
    latencies.sqsBatchSendSeconds;
  const fanoutSecondsPerBatch = fanoutSecondsFor(fanoutStreamSettings.batchSize);
  const eventsPerBatch = Math.min(
    fanoutStreamSettings.batchSize,
    Math.max(1, Math.ceil(eventsPerSecond / streamShards)),
  );
  const messagesPerBundle = Math.min(bundleSize, eventsPerBatch);
  // A page of the default size: one strongly consistent Scan of `limit + 1` plants.
  const pageReadUnits = Math.ceil(((defaultPageLimit + 1) * plantItemBytes) / 4096);
  const listReadUnits = size.requestsPerSecond * (routeMix['GET /plants'] ?? 0) * pageReadUnits;
  const timeout = functionSettings.webhookFanout.timeoutSeconds;
  // A batch past the timeout is bisected down to batches that fit.
  let admittedBatch: number = fanoutStreamSettings.batchSize;
  while (admittedBatch > 1 && fanoutSecondsFor(admittedBatch) > timeout) {
    admittedBatch = Math.ceil(admittedBatch / 2);
  }
  const fanoutEventsPerSecond =
    fanoutSecondsFor(admittedBatch) > timeout
      ? 0
      : (streamShards * fanoutStreamSettings.parallelizationFactor * admittedBatch) /
        fanoutSecondsFor(admittedBatch);
  const fanoutLostPerSecond = Math.max(0, eventsPerSecond - fanoutEventsPerSecond) * size.endpoints;
  if (fanoutSecondsPerBatch > timeout) {
    limitsHit.push(
      `fan-out: a full batch takes ${round(fanoutSecondsPerBatch)} s of its ${timeout} s timeout`,
    );
  }
  if (fanoutLostPerSecond > 0) {
    limitsHit.push(
      `fan-out: ${round(fanoutEventsPerSecond)} events/s of ${round(eventsPerSecond)}; the rest expire after ${awsLimits.streamRetentionHours} h`,
    );
  }

  // The authorizer: one run per token and cache TTL. A container reads a client's record once
  // (the webhook log) and asks the control plane nothing for a key in the plan: after a deploy,
  // nothing. A key not yet in the plan is added once for the stage, one every
  // `registrationSpacingMilliseconds` (two calls, and a plan lookup in the container that adds
  // it); meanwhile its client is counted in its bucket. Past the stage's cap, clients share
  // hashed buckets, each a key of the plan.
  const authorizerPerSecond = Math.min(
    size.requestsPerSecond,
    size.clients / authorizerCacheSeconds,
  );
  const clientsInBuckets = Math.max(0, size.clients - clientKeyCap);
  const keys = Math.min(size.clients, clientKeyCap) + (clientsInBuckets > 0 ? clientKeyBuckets : 0);
  const spacingSeconds = registrationSpacingMilliseconds / 1000;
  const controlPlaneCallsPerSecondAfterDeploy = 0;
  const controlPlaneCallsPerSecondAddingKeys = 3 / spacingSeconds;
  const keysAddedInHours = (keys * spacingSeconds) / 3600;
  const clientsWithoutKey = Math.max(0, keys - awsLimits.apiKeysPerAccount);
  if (controlPlaneCallsPerSecondAddingKeys > 1) {
    limitsHit.push(
      `control plane: ${round(controlPlaneCallsPerSecondAddingKeys)} calls/s while keys are added, of the account's ${awsLimits.controlPlaneCallsPerSecond}`,
    );
  }
  if (clientsWithoutKey > 0) {
    limitsHit.push(
      `API keys: ${clientsWithoutKey.toLocaleString('en-US')} clients past the ${awsLimits.apiKeysPerAccount.toLocaleString('en-US')}-key cap`,
    );
  }

  // Lambda: a delivery invocation waits once for its batch's slowest receiver and store calls,
  // and spends each delivery's CPU (`npm run cost`'s, at the function's memory), within its
  // mapping's maximum; past it they wait in the queue, and what waits past its 4 days is lost.
  // A batch holds the messages that came while a poller's last batch ran, up to its size; at
  // least five pollers share them (`awsLimits.sqsFirstPollers`).
  const invocationSeconds = latencies.receiverSeconds + 3 * latencies.dynamoSeconds;
  const messagesPerPoller = (deliveriesPerSecond / messagesPerBundle) * invocationSeconds;
  const batches = {
    deliveriesPerMessage: messagesPerBundle,
    messagesPerInvocation: Math.min(
      deliveryBatchSize,
      Math.max(1, messagesPerPoller / awsLimits.sqsFirstPollers),
    ),
  };
  const deliveryDemand =
    (deliveriesPerSecond / (batches.messagesPerInvocation * messagesPerBundle)) *
      invocationSeconds +
    (deliveriesPerSecond * cpuMilliseconds('deliverWebhook', defaultAssumptions)) / 1000;
  const { queues } = setup.webhookDeliveries;
  const deliveryMaximum = deliveryMappingConcurrency(setup.webhookDeliveries) * queues;
  const deliveryConcurrency = Math.min(deliveryDemand, deliveryMaximum);
  const deliveriesLostPerSecond =
    deliveryDemand > deliveryMaximum
      ? deliveriesPerSecond * (1 - deliveryMaximum / deliveryDemand)
      : 0;
  const webhooksLostPerSecond = Math.max(fanoutLostPerSecond, deliveriesLostPerSecond);
  if (deliveriesLostPerSecond > 0) {
    limitsHit.push(
      `deliveries: ${round(deliveryDemand)} functions needed, ${round(deliveryMaximum)} allowed on ${queues} ${queues === 1 ? 'queue' : 'queues'} (\`webhookDeliveries\`); the backlog grows until its 4 days run out`,
    );
  }
  // The account holds the rest beside the deliveries' maximum, or slow endpoints throttle them.
  const otherConcurrency =
    size.requestsPerSecond * latencies.routeFunctionSeconds +
    authorizerPerSecond * latencies.authorizerWarmSeconds +
    streamShards +
    retryMaximumConcurrency;
  const lambdaConcurrency = deliveryConcurrency + otherConcurrency;
  if (deliveryMaximum + otherConcurrency > setup.lambdaConcurrency) {
    limitsHit.push(
      `Lambda: the routes, the authorizer, the fan-out and the retries need ${round(otherConcurrency)} beside the deliveries' ${round(deliveryMaximum)}, of the account's ${setup.lambdaConcurrency.toLocaleString('en-US')}; slow endpoints would throttle them`,
    );
  }
  const budget = stageBudget(size).rateLimit;
  if (budget > setup.apiRequestsPerSecond) {
    limitsHit.push(
      `API Gateway: the stage's budget of ${round(budget)} requests/s past the account's ${round(setup.apiRequestsPerSecond)} (its bursts refused)`,
    );
  }

  // DynamoDB: per delivery, a claim, an attempt and its outcome in the log; per event, the event
  // under `event#<hour>`. The hottest key: that hour's, or page 1 of the plants list.
  const logTableWriteUnitsPerSecond = 3 * deliveriesPerSecond + eventsPerSecond;
  if (logTableWriteUnitsPerSecond > setup.tableWriteUnitsPerSecond) {
    limitsHit.push(
      `webhook log: ${Math.round(logTableWriteUnitsPerSecond).toLocaleString('en-US')} write units/s against a table's ${setup.tableWriteUnitsPerSecond.toLocaleString('en-US')}`,
    );
  }
  // The endpoints table: a delivery invocation reads each endpoint once, so a read a bundle.
  const endpointsTableReadUnitsPerSecond = deliveriesPerSecond / messagesPerBundle;
  if (endpointsTableReadUnitsPerSecond > setup.tableReadUnitsPerSecond) {
    limitsHit.push(
      `endpoints table: ${Math.round(endpointsTableReadUnitsPerSecond).toLocaleString('en-US')} read units/s against a table's ${setup.tableReadUnitsPerSecond.toLocaleString('en-US')}`,
    );
  }
  const hotKeys = [
    { key: 'event#<hour>', share: eventsPerSecond / awsLimits.partitionWriteUnitsPerSecond },
    // Page 1 begins in one of `listSegments` key ranges at random: a large table's partitions.
    {
      key: 'plants page 1',
      share: listReadUnits / listSegments / awsLimits.partitionReadUnitsPerSecond,
    },
    {
      key: 'attempts#<endpoint>',
      share: (2 * eventsPerSecond) / awsLimits.partitionWriteUnitsPerSecond,
    },
  ];
  const hottest = hotKeys.reduce((worst, key) => (key.share > worst.share ? key : worst));
  if (hottest.share > 0.5) {
    limitsHit.push(`hot key: ${hottest.key} at ${percent(hottest.share)} of a partition`);
  }

  // KMS: each container that opens or seals secrets (the deliveries, the retries, and the
  // secret's, create's and rotate's) opens the stage's data key once in its life, whatever the
  // number of endpoints (`secret-box.ts`).
  const deliveryContainers = Math.max(1, Math.ceil(deliveryConcurrency));
  const kmsDecryptPerSecond =
    (deliveryContainers + retryMaximumConcurrency + 3) / latencies.containerLifeSeconds;
  if (kmsDecryptPerSecond > 100) {
    limitsHit.push(
      `KMS: ${Math.round(kmsDecryptPerSecond).toLocaleString('en-US')} Decrypt/s, $${Math.round((kmsDecryptPerSecond * 86_400 * prices.kmsPerTenThousandRequests) / 10_000).toLocaleString('en-US')} a day`,
    );
  }

  const costs = estimateCosts(defaultAssumptions);
  const costPerMillionRequests = costs.reduce(
    (sum, row) => sum + row.total * (routeMix[row.operation] ?? 0),
    0,
  );
  const costPerMillionDeliveries = estimateEndpointCosts(
    defaultAssumptions,
    size.endpoints,
    batches,
  ).perMillionDeliveries;
  const logGigabytesPerDay =
    ((size.requestsPerSecond * defaultAssumptions.logBytesPerRequest + deliveriesPerSecond * 400) *
      86_400) /
    1e9;

  return {
    ...size,
    stageBudgetPerSecond: stageBudget(size).rateLimit,
    refusedShareUnderBudget,
    eventsPerSecond,
    deliveriesPerSecond,
    streamShards,
    fanoutSecondsPerBatch,
    fanoutEventsPerSecond,
    webhooksLostPerSecond,
    controlPlaneCallsPerSecondAfterDeploy,
    controlPlaneCallsPerSecondAddingKeys,
    keysAddedInHours,
    clientsWithoutKey,
    clientsInBuckets,
    lambdaConcurrency,
    deliveryConcurrency,
    logTableWriteUnitsPerSecond,
    endpointsTableReadUnitsPerSecond,
    hottestKey: hottest.key,
    hottestKeyShareOfPartition: hottest.share,
    kmsDecryptPerSecond,
    logGigabytesPerDay,
    costPerMillionRequests,
    costPerMillionDeliveries,
    limitsHit,
    deliveryDemand,
    deliveryMaximum,
    otherConcurrency,
  };
}

function round(value: number): string {
  if (!Number.isFinite(value)) return '∞';
  return value >= 100
    ? Math.round(value).toLocaleString('en-US')
    : String(Math.round(value * 100) / 100);
}

function percent(share: number): string {
  return `${Math.round(share * 1000) / 10} %`;
}

/** The table `npm run capacity` prints, one column a size. */
export function capacityTable(figures: readonly SizeFigures[]): string {
  const row = (label: string, value: (size: SizeFigures) => string) =>
    `| ${label} | ${figures.map(value).join(' | ')} |`;
  return [
    `| | ${figures.map((size) => size.name).join(' | ')} |`,
    `|---|${figures.map(() => '---:').join('|')}|`,
    row('requests/s, clients, endpoints', (size) =>
      [size.requestsPerSecond, size.clients, size.endpoints].map(round).join(', '),
    ),
    row('stage budget (requests/s)', (size) => round(size.stageBudgetPerSecond)),
    row('refused under the budget', (size) => percent(size.refusedShareUnderBudget)),
    row(
      'events/s, deliveries/s',
      (size) => `${round(size.eventsPerSecond)}, ${round(size.deliveriesPerSecond)}`,
    ),
    row('fan-out: a batch takes (s)', (size) => round(size.fanoutSecondsPerBatch)),
    row('fan-out: events/s it admits', (size) => round(size.fanoutEventsPerSecond)),
    row('webhooks lost/s', (size) => round(size.webhooksLostPerSecond)),
    row('control plane after a deploy (calls/s)', (size) =>
      round(size.controlPlaneCallsPerSecondAfterDeploy),
    ),
    row('control plane while keys are added (calls/s)', (size) =>
      round(size.controlPlaneCallsPerSecondAddingKeys),
    ),
    row("a new stage's keys all added in (h)", (size) => round(size.keysAddedInHours)),
    row(
      'clients without a key, in buckets',
      (size) => `${round(size.clientsWithoutKey)}, ${round(size.clientsInBuckets)}`,
    ),
    row('Lambda concurrency', (size) => round(size.lambdaConcurrency)),
    row('webhook log write units/s', (size) => round(size.logTableWriteUnitsPerSecond)),
    row('endpoints table read units/s', (size) => round(size.endpointsTableReadUnitsPerSecond)),
    row(
      'hottest key (share of a partition)',
      (size) => `${size.hottestKey} ${percent(size.hottestKeyShareOfPartition)}`,
    ),
    row('KMS Decrypt/s', (size) => round(size.kmsDecryptPerSecond)),
    row('logs (GB a day)', (size) => round(size.logGigabytesPerDay)),
    row('$ per million requests', (size) => size.costPerMillionRequests.toFixed(2)),
    row('$ per million deliveries', (size) => size.costPerMillionDeliveries.toFixed(2)),
    row('needs: deliveries (functions, queues)', (size) => {
      const { concurrency, queues } = (size.needs ?? prodSetup).webhookDeliveries;
      return `${round(concurrency)}, ${queues}`;
    }),
    row('needs: account API requests/s, Lambda concurrency', (size) => {
      const needs = size.needs ?? prodSetup;
      return `${round(needs.apiRequestsPerSecond)}, ${round(needs.lambdaConcurrency)}`;
    }),
    row('needs: a table’s write, read units/s', (size) => {
      const needs = size.needs ?? prodSetup;
      return `${round(needs.tableWriteUnitsPerSecond)}, ${round(needs.tableReadUnitsPerSecond)}`;
    }),
  ].join('\n');
}

/** The limits each size passes, a list per size, and then with what it needs. */
export function limitsList(figures: readonly SizeFigures[]): string {
  const listed = (limits: readonly string[]) =>
    limits.length === 0 ? 'no limit reached' : limits.join('; ');
  return figures
    .flatMap((size) => [
      `${size.name}: ${listed(size.limitsHit)}.`,
      ...(size.limitsHit.length === 0
        ? []
        : [`${size.name} with what it needs: ${listed(size.limitsHitWithNeeds)}.`]),
    ])
    .join('\n');
}

function main(): void {
  const { values } = parseArgs({
    options: {
      json: { type: 'boolean', default: false },
      name: { type: 'string', default: 'custom' },
      requests: { type: 'string' },
      clients: { type: 'string' },
      endpoints: { type: 'string' },
    },
  });
  const given =
    values.requests === undefined
      ? sizes
      : [
          {
            name: values.name,
            requestsPerSecond: Number(values.requests),
            clients: Number(values.clients ?? values.requests),
            endpoints: Number(values.endpoints ?? 0),
          },
        ];
  const figures = given.map(modelSize);
  if (values.json) {
    console.log(JSON.stringify({ sizes: figures }, null, 2));
    return;
  }
  console.log(`${capacityTable(figures)}\n\n${limitsList(figures)}`);
}

if (import.meta.main) main();
