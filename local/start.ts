/**
 * `npm start`: the Plant Store on this machine, no AWS account needed (`local-api.ts`). Its
 * environment variables (`PORT`, `TABLE_NAME`, `DYNAMODB_ENDPOINT`, `PLANT_STORE_DATA_DIR`,
 * `THROTTLING`, the `WEBHOOK_*` settings, `CORS_ORIGINS`, `HOT_RELOAD`, `QUEUE_FAULT_FILE`, the
 * `OTEL_*` ones) and its one flag (`--traces`: a trace viewer beside it) are in
 * docs/running-locally.md. Ctrl-C or SIGTERM stops everything it started and exits 0; a failed
 * start prints one line and exits 1, leaving nothing running.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { checkAllowedOrigins } from '../functions/shared/http/cors.ts';
import { routes } from '../functions/shared/http/routes.ts';
import {
  commaList,
  parsed,
  readConfiguration,
} from '../functions/shared/platform/configuration.ts';
import { tracesEndpoint } from '../functions/shared/platform/spans.ts';
import { subscriptionOf } from '../functions/shared/webhooks/plant-events.ts';
import { parseEndpointUrls } from '../functions/webhook-endpoints/endpoint-config.ts';
import {
  type EndpointUrlPolicy,
  localUrlPolicy,
} from '../functions/webhook-endpoints/endpoint-url.ts';
import { defaultStageName, stages } from '../infra/stages.ts';
import { startTraceViewer, type TraceViewer } from './jaeger.ts';
import { type LocalApi, startLocalApi } from './local-api.ts';
import { ensurePrivateDirectory } from './private-directory.ts';
import { localKeysDirectory } from './token-issuer.ts';
import {
  type LocalWebhooks,
  resolveLocalWebhooks,
  webhookSettingsOf,
  webhookVariables,
} from './webhook-settings.ts';

const samplePlant = { id: 1, name: 'Monstera', tag: 'tropical' };
const tokenLifetimeSeconds = 3600;

/** `PORT`: digits only (`Number(' ')` is 0, which would silently pick a random port). */
function parsePort(text: string): number {
  const port = /^[0-9]{1,5}$/.test(text) ? Number(text) : Number.NaN;
  if (!(port >= 0 && port <= 65_535)) throw new Error('must be a port number from 0 to 65535');
  return port;
}

function parseStoreEndpoint(text: string): string {
  if (!URL.canParse(text) || !/^https?:$/.test(new URL(text).protocol)) {
    throw new Error('must be an http(s) URL such as http://127.0.0.1:8000');
  }
  return text;
}

/** `WEBHOOK_RETRY_SCHEDULE`: whole seconds before each retry, such as `2,2,5`. */
function parseSchedule(text: string): readonly number[] {
  const schedule = commaList(text).map(Number);
  if (
    schedule.length === 0 ||
    !schedule.every((seconds) => Number.isInteger(seconds) && seconds >= 0)
  ) {
    throw new Error('must be whole seconds separated by commas, such as 2,2,5');
  }
  return schedule;
}

/** `HOT_RELOAD`: `on` or `off`. */
function parseSwitch(text: string): boolean {
  if (text !== 'on' && text !== 'off') throw new Error('must be on or off');
  return text === 'on';
}

function parseThrottling(text: string): string {
  if (text !== 'off' && !Object.hasOwn(stages, text)) {
    throw new Error(`must be a stage (${Object.keys(stages).join(', ')}) or off`);
  }
  return text;
}

/** The curl command printed at start-up: one line, single-quoted for POSIX shells. */
function formatCurl(url: string, token: string): string {
  return [
    `curl -i -X POST ${url}/plants`,
    `-H 'Authorization: Bearer ${token}'`,
    `-H 'Content-Type: application/json'`,
    `-d '${JSON.stringify(samplePlant)}'`,
  ].join(' ');
}

function describeWebhooks(webhooks: LocalWebhooks, endpointUrls: EndpointUrlPolicy): string[] {
  const endpoints = [
    `  Endpoints:  clients register their own (POST /webhook-endpoints; npm run -s token -- --scope 'webhooks/manage plants/read' --subject <client>)`,
    `              ${endpointUrls.allowLoopback ? "http and this machine's loopback allowed (WEBHOOK_ENDPOINT_URLS=deployed refuses them)" : 'https to public hosts only, as deployed (WEBHOOK_ENDPOINT_URLS)'}`,
  ];
  if (webhooks.subscribers.length === 0) {
    return [
      '  Webhooks:   off (WEBHOOK_URL=<url>[,<url>…] sends every new plant there)',
      ...endpoints,
    ];
  }
  const secret =
    webhooks.newSecret !== undefined
      ? `a new secret, kept in ${webhooks.secretFile} (shown once): ${webhooks.newSecret}`
      : webhooks.secretFile !== undefined
        ? `the secret in ${webhooks.secretFile}`
        : 'WEBHOOK_SECRET';
  const [first] = webhooks.subscribers;
  const subscription = subscriptionOf('npm start', first ?? {});
  const what =
    subscription.format === 'plant'
      ? 'every new plant'
      : `${subscription.events.join(', ')} events (the event format)`;
  return [
    `  Webhooks:   ${what} POSTed to ${webhooks.subscribers.map((subscriber) => subscriber.url).join(', ')}`,
    `              signed (Standard Webhooks) with ${secret}`,
    ...endpoints,
  ];
}

function describeStart(
  api: LocalApi,
  dataDirectory: string | undefined,
  throttling: string,
  webhooks: LocalWebhooks,
  endpointUrls: EndpointUrlPolicy,
  allowedOrigins: readonly string[],
  hotReload: boolean,
  viewer: TraceViewer | undefined,
): string {
  const seconds = (performance.now() / 1000).toFixed(1);
  const store =
    dataDirectory === undefined
      ? `${api.storeUrl} (DYNAMODB_ENDPOINT), table "${api.tableName}"`
      : `${api.storeUrl} DynamoDB Local (pid ${api.dynamoDbLocalPid}), table "${api.tableName}", data in ${dataDirectory}`;
  const limits =
    throttling === 'off'
      ? 'off (THROTTLING=off)'
      : `the ${throttling} stage's (THROTTLING=off lifts it)`;
  return [
    `Plant Store local API ready in ${seconds} s`,
    `  API:        ${api.url}  (reference and "try it": ${api.url}/docs)`,
    ...routes.map(
      (route) =>
        `              ${route.method.padEnd(6)} ${route.path}  (${route.scopes.join(' + ')})`,
    ),
    `  Store:      ${store}`,
    `  Throttling: ${limits}`,
    `  Reload:     ${hotReload ? 'a saved change under functions/ answers the next request (HOT_RELOAD=off)' : 'off (HOT_RELOAD=off); restart for a change'}`,
    `  Browsers:   ${allowedOrigins.length === 0 ? 'no cross-origin page (CORS_ORIGINS=none)' : `pages on ${allowedOrigins.join(', ')} may call it (CORS_ORIGINS)`}`,
    ...describeWebhooks(webhooks, endpointUrls),
    `  Traces:     ${describeTraces(viewer)}`,
    '',
    'Try it (the token is valid for 1 hour and grants both plant scopes; `npm run -s token` prints a new one):',
    '',
    formatCurl(api.url, api.signToken({ expiresInSeconds: tokenLifetimeSeconds })),
    '',
    'Ctrl-C stops it. Request logs follow.',
    '',
  ].join('\n');
}

function describeTraces(viewer: TraceViewer | undefined): string {
  if (viewer !== undefined) {
    return `Jaeger at ${viewer.url} (a trace: ${viewer.url}/trace/<id>, the id an answer's traceresponse names; its API: /api/traces/<id>)`;
  }
  const endpoint = tracesEndpoint();
  return endpoint
    ? `spans sent to ${endpoint} (OTEL_EXPORTER_OTLP_ENDPOINT)`
    : 'off (npm start -- --traces starts a viewer; OTEL_EXPORTER_OTLP_ENDPOINT sends them elsewhere)';
}

/** Pages served from this machine, on any port: a dev server, the examples, the docs. */
const localOrigins = ['http://localhost:*', 'http://127.0.0.1:*'];

/** `CORS_ORIGINS`: origins separated by commas (`http://localhost:*` for any port), or `none`. */
function parseCorsOrigins(text: string): readonly string[] {
  if (text.trim() === 'none') return [];
  return checkAllowedOrigins(commaList(text), { anyOrigin: true, anyPort: true });
}

/** How often the process checks that whoever started it is still there. */
const parentCheckMilliseconds = 1_000;

/** The settings, one line naming every problem when some cannot be used. */
function readSettings(environment: NodeJS.ProcessEnv) {
  const variables = readConfiguration(
    'npm start',
    {
      PLANT_STORE_DATA_DIR: parsed((text) => text, { fallback: '.data' }),
      DYNAMODB_ENDPOINT: parsed(parseStoreEndpoint, { fallback: '' }),
      THROTTLING: parsed(parseThrottling, { fallback: defaultStageName as string }),
      PORT: parsed(parsePort, { fallback: 3000 }),
      TABLE_NAME: parsed((text) => text, { fallback: 'plants' }),
      ...webhookVariables,
      WEBHOOK_ENDPOINT_URLS: parsed(parseEndpointUrls, { fallback: localUrlPolicy }),
      CORS_ORIGINS: parsed(parseCorsOrigins, { fallback: localOrigins as readonly string[] }),
      HOT_RELOAD: parsed(parseSwitch, { fallback: true }),
      WEBHOOK_RETRY_SCHEDULE: parsed(parseSchedule, { fallback: [] as readonly number[] }),
      QUEUE_FAULT_FILE: parsed((text) => text, { fallback: '' }),
    },
    environment,
    { secrets: ['WEBHOOK_SECRET'], createError: (problems) => new Error(problems.join(' ')) },
  );
  const dataDirectory = variables.PLANT_STORE_DATA_DIR;
  const dynamoDbUrl = variables.DYNAMODB_ENDPOINT;
  return {
    variables,
    dataDirectory,
    dynamoDbUrl,
    // DynamoDB Local's data, when npm start runs it.
    dynamoDbDataDirectory: dynamoDbUrl === '' ? join(dataDirectory, 'dynamodb') : undefined,
    throttling: variables.THROTTLING,
    endpointUrls: variables.WEBHOOK_ENDPOINT_URLS,
    allowedOrigins: variables.CORS_ORIGINS,
    hotReload: variables.HOT_RELOAD,
  };
}

/** Starts the local API as the settings say; its folders private to the user. */
async function startFromSettings(
  settings: ReturnType<typeof readSettings>,
  environment: NodeJS.ProcessEnv,
) {
  const { variables, dataDirectory, dynamoDbUrl, dynamoDbDataDirectory } = settings;
  ensurePrivateDirectory(dataDirectory);
  const webhooks = resolveLocalWebhooks(webhookSettingsOf(variables), dataDirectory);
  const webhookDataDirectory = join(dataDirectory, 'webhooks');
  ensurePrivateDirectory(webhookDataDirectory);
  const api = await startLocalApi({
    webhookDataDirectory,
    hotReload: settings.hotReload,
    port: variables.PORT,
    tableName: variables.TABLE_NAME,
    keysDirectory: localKeysDirectory(environment),
    throttlingStage: settings.throttling,
    webhooks: {
      subscribers: webhooks.subscribers,
      endpointUrlPolicy: settings.endpointUrls,
      // None given: the product's schedule.
      ...(variables.WEBHOOK_RETRY_SCHEDULE.length === 0
        ? {}
        : { retrySchedule: variables.WEBHOOK_RETRY_SCHEDULE }),
      ...(variables.QUEUE_FAULT_FILE === ''
        ? {}
        : { refuseSends: () => existsSync(variables.QUEUE_FAULT_FILE) }),
    },
    allowedOrigins: settings.allowedOrigins,
    ...(dynamoDbUrl === '' ? { dynamoDbDataDirectory } : { dynamoDbUrl }),
  });
  return { api, webhooks };
}

/**
 * Stops everything on every way of being stopped, and exits: 0 when asked to stop, 1 when the
 * store died under the API.
 */
function stopOnSignals(api: LocalApi, viewer: TraceViewer | undefined): void {
  let stopping = false;
  const stop = async (reason: string, failure?: string) => {
    // A second Ctrl-C while stopping changes nothing: stop() already ends the JVM, forcibly if slow.
    if (stopping) return;
    stopping = true;
    if (failure === undefined) process.stdout.write(`\n${reason}: stopping…\n`);
    else process.stderr.write(`${failure}\n`);
    try {
      await api.stop();
      await viewer?.stop();
      if (failure === undefined) process.stdout.write('Stopped.\n');
      process.exit(failure === undefined ? 0 : 1);
    } catch (error) {
      process.stderr.write(
        `Could not stop cleanly: ${error instanceof Error ? error.message : error}\n`,
      );
      process.exit(1);
    }
  };
  // The API cannot answer without its store: if DynamoDB Local dies, say so once and stop, rather
  // than answer 503 to everything while the webhooks retry in silence.
  void api.storeDied?.then((lastWords) =>
    stop(
      'store gone',
      `DynamoDB Local (pid ${api.dynamoDbLocalPid}) stopped on its own (${lastWords}): the Plant Store stops too; start it again with npm start.`,
    ),
  );
  // Ctrl-C signals the whole process group; `docker stop`, systemd and IDEs send SIGTERM to the
  // process they started, which `npm start` hands straight to this process (its script `exec`s
  // node, so no shell stands in between to swallow the signal); a closed terminal sends SIGHUP.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, (name) => void stop(name));
  }
  // Whoever started this process may die without a signal for it (npm killed with SIGKILL):
  // then this process is adopted by another and stops too, rather than serve on unseen.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) void stop('parent process gone');
  }, parentCheckMilliseconds).unref();
}

async function main(): Promise<void> {
  let settings: ReturnType<typeof readSettings>;
  let started: Awaited<ReturnType<typeof startFromSettings>>;
  let viewer: TraceViewer | undefined;
  try {
    settings = readSettings(process.env);
    // `--traces`: a viewer, which the functions send their spans to.
    if (process.argv.slice(2).includes('--traces')) {
      process.stdout.write('Starting the trace viewer…\n');
      viewer = await startTraceViewer(settings.dataDirectory);
      process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = `${viewer.otlpEndpoint}/v1/traces`;
    }
    started = await startFromSettings(settings, process.env);
  } catch (error) {
    await viewer?.stop();
    // One line for a failed start: the problems, each naming its variable.
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`Could not start the Plant Store locally: ${message}\n`);
    process.exit(1);
  }
  process.stdout.write(
    describeStart(
      started.api,
      settings.dynamoDbDataDirectory,
      settings.throttling,
      started.webhooks,
      settings.endpointUrls,
      settings.allowedOrigins,
      settings.hotReload,
      viewer,
    ),
  );
  stopOnSignals(started.api, viewer);
}

await main();
