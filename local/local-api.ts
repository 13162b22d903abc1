/**
 * The whole Plant Store on one machine: DynamoDB Local (or a store you name), the development
 * token issuer's JWKS, the authorizer and the functions' handlers, the API Gateway stand-in in
 * front of them, and the webhook pipeline (`local-webhooks.ts`). `start.ts` is its command line;
 * tests start it in-process on a free port.
 */

import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { functionDisplayName, routes } from '../functions/shared/http/routes.ts';
import {
  createDocumentClient,
  type DocumentClientOptions,
} from '../functions/shared/platform/dynamodb.ts';
import { createLogger, type Logger } from '../functions/shared/platform/logger.ts';
import {
  type EndpointUrlPolicy,
  localUrlPolicy,
} from '../functions/webhook-endpoints/endpoint-url.ts';
import { localSecretBox } from '../functions/webhook-endpoints/secret-box.ts';
import { functionSettings } from '../infra/function-settings.ts';
import { resolveStageConfig } from '../infra/stages.ts';
import { clientThrottling, routeThrottling, tokenLimits } from '../infra/throttling.ts';
import { type ApiGateway, type ApiGatewayOptions, startApiGateway } from './api-gateway/gateway.ts';
import { createDocsPages } from './docs-page.ts';
import { type DynamoDbLocal, startDynamoDbLocal } from './dynamodb-local.ts';
import { loadOrCreateEndpointSecretsKey } from './endpoint-secrets-key.ts';
import { filesImportedAtStart, startHotReload } from './hot-reload.ts';
import { localAuthorizerEnvironment, startJwksServer } from './jwks-server.ts';
import {
  type LocalWebhooks,
  type LocalWebhooksOptions,
  startLocalWebhooks,
} from './local-webhooks.ts';
import { type LocalFunctions, loadLocalFunctions } from './route-functions.ts';
import {
  createStoreCredentials,
  loadOrCreateStoreCredentials,
  type StoreCredentials,
} from './store-credentials.ts';
import { createPlantsTableIfMissing, createWebhookEndpointTablesIfMissing } from './tables.ts';
import {
  type LocalTokenOptions,
  loadOrCreateLocalKeys,
  localJwks,
  signLocalToken,
} from './token-issuer.ts';

export interface LocalApiOptions {
  /** Port on 127.0.0.1; 0 picks a free one. @default 3000 */
  readonly port?: number;
  /** @default 'plants' */
  readonly tableName?: string;
  /** An already running DynamoDB-compatible store; DynamoDB Local is started when absent. */
  readonly dynamoDbUrl?: string;
  /** Where DynamoDB Local keeps its data across restarts; in memory when absent. */
  readonly dynamoDbDataDirectory?: string;
  /**
   * Where the webhook queues are saved at a stop (and taken up at the next start), and where the
   * stream batches the fan-out gave up on are kept; nowhere when absent.
   */
  readonly webhookDataDirectory?: string;
  /** The folder of the development issuer's key pair (created when missing). */
  readonly keysDirectory: string;
  /**
   * The deployed stage whose throttling the local gateway imitates, or `'off'` for none (local
   * load tests). @default 'dev'
   */
  readonly throttlingStage?: string;
  /** Gateway options for tests (throttling, timeouts), applied over the defaults. */
  readonly gateway?: Partial<Omit<ApiGatewayOptions, 'routes' | 'authorizer' | 'port'>>;
  /** Receives the request logs and the handlers' logs. */
  readonly logger?: Logger;
  /**
   * The origins whose pages may call the API (`functions/shared/http/cors.ts`); none when absent.
   */
  readonly allowedOrigins?: readonly string[];
  /** Where webhooks go: the stage-like subscribers, and how endpoints are delivered to. */
  readonly webhooks?: LocalWebhookOptions;
  /** Builds the functions again after each saved change under `functions/`. @default false */
  readonly hotReload?: boolean;
}

export interface LocalWebhookOptions
  extends Partial<
    Pick<
      LocalWebhooksOptions,
      | 'subscribers'
      | 'retrySchedule'
      | 'timeoutMilliseconds'
      | 'pollIntervalMilliseconds'
      | 'refuseSends'
    >
  > {
  /** Which URLs endpoints may have: http and this machine's loopback too, unless given. */
  readonly endpointUrlPolicy?: EndpointUrlPolicy;
  /** The clock of the endpoints (tests move it days ahead). */
  readonly now?: () => number;
  /** How long every attempt must fail before an endpoint is disabled. @default 5 days */
  readonly failingLimitMilliseconds?: number;
}

export interface LocalApi {
  /** The base URL, e.g. `http://127.0.0.1:3000`. */
  readonly url: string;
  readonly port: number;
  /** The DynamoDB endpoint the API stores into. */
  readonly storeUrl: string;
  /** The JVM's process id when this local API started DynamoDB Local. */
  readonly dynamoDbLocalPid: number | undefined;
  /** Resolves, with its last words, if the DynamoDB Local this API started dies under it. */
  readonly storeDied: Promise<string> | undefined;
  readonly tableName: string;
  /** The webhook pipeline: the stage-like subscribers' and the endpoints' deliveries. */
  readonly webhooks: LocalWebhooks;
  /** Signs a token the local API's authorizer checks (valid with the required scope by default). */
  signToken(options?: LocalTokenOptions): string;
  /** Stops the gateway, the JWKS server and DynamoDB Local (waiting for the JVM to exit). */
  stop(): Promise<void>;
}

/**
 * Starts everything; on a failure, stops whatever had started before rethrowing, so nothing is
 * left running.
 */
export async function startLocalApi(options: LocalApiOptions): Promise<LocalApi> {
  const tableName = options.tableName ?? 'plants';
  const logger = options.logger ?? createLogger({ service: 'local-api' });
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    // Last started, first stopped: the gateway stops taking requests before the store goes.
    // Each is stopped even if one before it failed; the first failure is thrown at the end.
    const failures: unknown[] = [];
    for (const stop of stops.splice(0).reverse())
      await stop().catch((error) => failures.push(error));
    if (failures.length > 0) throw failures[0];
  };
  try {
    const keys = loadOrCreateLocalKeys(options.keysDirectory);
    const { store, jwksServer } = await startServices(options, keys, stops);
    const storeUrl = store?.url ?? (options.dynamoDbUrl as string);
    const credentials = store?.credentials;
    const documentClient = createDocumentClient({
      url: storeUrl,
      ...(credentials === undefined ? {} : { credentials }),
    });
    stops.push(async () => documentClient.destroy());
    const { streamArn, ...endpointTables } = await createTables(
      { url: storeUrl, ...(credentials === undefined ? {} : { credentials }) },
      tableName,
    );
    const webhookOptions = options.webhooks ?? {};
    const endpointSettings = {
      secretBox: localSecretBox(loadOrCreateEndpointSecretsKey(options.keysDirectory)),
      urlPolicy: webhookOptions.endpointUrlPolicy ?? localUrlPolicy,
    };
    const webhooks = await startLocalWebhooks({
      subscribers: webhookOptions.subscribers ?? [],
      ...pick(webhookOptions, [
        'retrySchedule',
        'timeoutMilliseconds',
        'pollIntervalMilliseconds',
        'refuseSends',
      ]),
      endpoints: {
        stores: { documentClient, ...endpointTables },
        ...endpointSettings,
        ...pick(webhookOptions, ['now', 'failingLimitMilliseconds']),
      },
      storeUrl,
      ...(credentials === undefined ? {} : { credentials }),
      ...(options.webhookDataDirectory === undefined
        ? {}
        : { dataDirectory: options.webhookDataDirectory }),
      documentClient,
      tableName,
      streamArn,
      logger: logger.child({ component: 'webhooks' }),
    });
    stops.push(() => webhooks.stop());
    const functions = await loadLocalFunctions({
      dependenciesOf: (name) => ({
        documentClient,
        tableName,
        ...endpointTables,
        ...endpointSettings,
        deliveries: webhooks.deliveries,
        ...pick(webhookOptions, ['now']),
        allowedOrigins: options.allowedOrigins ?? [],
        logger: logger.child({ function: functionDisplayName(name) }),
      }),
      authorizerEnvironment: localAuthorizerEnvironment(jwksServer.jwksUri),
      authorizerOptions: { logger: logger.child({ function: 'authorizer' }) },
    });
    const gateway = await startGateway(options, functions, logger);
    stops.push(() => gateway.close());
    if (options.hotReload === true) {
      const reloading = startFunctionsReload(functions, webhooks, logger);
      stops.push(() => reloading.stop());
    }
    return {
      url: gateway.url,
      port: gateway.port,
      storeUrl: storeUrl,
      dynamoDbLocalPid: store?.pid,
      storeDied: store?.died,
      tableName,
      webhooks,
      signToken: (tokenOptions) => signLocalToken(keys, tokenOptions),
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/**
 * The store and the issuer's JWKS server. The JVM takes a second or two to start: the keys are
 * served meanwhile. Both settle before a failure is thrown, so that whichever did start is stopped.
 */
async function startServices(
  options: LocalApiOptions,
  keys: ReturnType<typeof loadOrCreateLocalKeys>,
  stops: (() => Promise<void>)[],
) {
  const [storeStart, jwksStart] = await Promise.allSettled([
    startStore(options, stops),
    startJwksServer(localJwks(keys)).then((server) => {
      stops.push(() => server.close());
      return server;
    }),
  ]);
  if (storeStart.status === 'rejected') throw storeStart.reason;
  if (jwksStart.status === 'rejected') throw jwksStart.reason;
  return { store: storeStart.value, jwksServer: jwksStart.value };
}

/**
 * The plants table (and its stream's ARN) and the endpoints' two tables beside it, made when
 * missing, with a client of their own: making a table is the store's slowest call, slower still
 * from a fresh JVM on a busy machine, and the API's client gives a call 1 s an attempt.
 */
async function createTables(
  store: Pick<DocumentClientOptions, 'url' | 'credentials'>,
  tableName: string,
) {
  const client = createDocumentClient({
    ...store,
    connectionTimeoutMilliseconds: 5_000,
    requestTimeoutMilliseconds: 30_000,
  });
  try {
    const endpointTables = {
      endpointsTableName: `${tableName}-webhook-endpoints`,
      logTableName: `${tableName}-webhook-log`,
    };
    await Promise.all([
      createPlantsTableIfMissing(client, tableName),
      createWebhookEndpointTablesIfMissing(client, {
        endpoints: endpointTables.endpointsTableName,
        log: endpointTables.logTableName,
      }),
    ]);
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const streamArn = Table?.LatestStreamArn;
    if (streamArn === undefined) throw new Error(`The table ${tableName} has no stream.`);
    return { ...endpointTables, streamArn };
  } finally {
    client.destroy();
  }
}

/**
 * The API Gateway stand-in: every route of the route table with its function's timeout and, unless
 * throttling is off, its share of the imitated stage's budget, behind the stage's per-client limits.
 */
function startGateway(
  options: LocalApiOptions,
  functions: LocalFunctions,
  logger: Logger,
): Promise<ApiGateway> {
  const stage =
    options.throttlingStage === 'off' ? undefined : resolveStageConfig(options.throttlingStage);
  const budgets = stage && {
    plants: stage.throttling,
    ...(stage.webhookEndpointThrottling === undefined
      ? {}
      : { webhookEndpoints: stage.webhookEndpointThrottling }),
  };
  return startApiGateway({
    port: options.port ?? 3000,
    ...(budgets === undefined ? {} : { tokenLimits: tokenLimits(budgets) }),
    authorizerTimeoutMilliseconds: functionSettings.authorizer.timeoutSeconds * 1000,
    logger,
    allowedOrigins: options.allowedOrigins ?? [],
    localPages: createDocsPages(),
    ...options.gateway,
    authorizer: functions.authorizer,
    routes: routes.map((route) => ({
      httpMethod: route.method,
      resourcePath: route.path,
      functionName: functionDisplayName(route.function),
      timeoutMilliseconds: functionSettings[route.function].timeoutSeconds * 1000,
      ...(budgets === undefined
        ? {}
        : {
            throttling: routeThrottling(route, budgets),
            clientThrottling: clientThrottling(route, budgets),
          }),
      handler: functions.routeHandler(route.function),
    })),
  });
}

/**
 * Hot reload: a saved change under `functions/` builds every handler again (the route functions,
 * the authorizer, the fan-out and the delivery, with the modules they import), all before any is
 * put in use, and one log line says what changed and how long it took. What `npm start` itself
 * made at start from `functions/` stays as it was (the route table, the gateway's own answers,
 * the clients it hands the functions): the line names such a file, which needs a restart.
 */
function startFunctionsReload(functions: LocalFunctions, webhooks: LocalWebhooks, logger: Logger) {
  const functionsRoot = new URL('../functions/', import.meta.url);
  const readAtStart = filesImportedAtStart(new URL('./', import.meta.url), functionsRoot);
  return startHotReload({
    root: functionsRoot,
    reload: async (importFresh) => {
      const installs = await Promise.all([
        functions.prepareReload(importFresh),
        webhooks.prepareReload(importFresh),
      ]);
      for (const install of installs) install();
    },
    report: (outcome) => {
      const changed = outcome.changed.map((file) => `functions/${file}`);
      const restartFor = outcome.changed
        .filter((file) => readAtStart.has(file))
        .map((file) => `functions/${file}`);
      const note =
        restartFor.length === 0
          ? {}
          : {
              restartFor,
              note: 'npm start itself read these at start (the route table, the gateway, the clients it hands the functions): restart for them',
            };
      if (outcome.ok) {
        logger.info('reloaded the functions', {
          changed,
          milliseconds: outcome.milliseconds,
          ...note,
        });
      } else {
        logger.error('could not reload the functions; the previous code still answers', {
          changed,
          error: outcome.error,
        });
      }
    },
  });
}

/**
 * Starts DynamoDB Local unless the options name a store (`undefined` then), its data private to
 * a key id kept in the data folder (or made for this run when it keeps nothing).
 */
async function startStore(
  options: LocalApiOptions,
  stops: (() => Promise<void>)[],
): Promise<(DynamoDbLocal & { credentials: StoreCredentials }) | undefined> {
  if (options.dynamoDbUrl !== undefined) return undefined;
  const dataDirectory = options.dynamoDbDataDirectory;
  const credentials =
    dataDirectory === undefined
      ? createStoreCredentials()
      : loadOrCreateStoreCredentials(dataDirectory);
  const store = await startDynamoDbLocal({
    ...(dataDirectory === undefined ? {} : { dataDirectory }),
    privateAccessKeyId: credentials.accessKeyId,
  });
  stops.push(() => store.stop());
  return { ...store, credentials };
}

/** The options among `keys` that are set. */
function pick<Options extends object, Key extends keyof Options>(
  options: Options,
  keys: readonly Key[],
): Partial<Pick<Options, Key>> {
  return Object.fromEntries(
    keys.filter((key) => options[key] !== undefined).map((key) => [key, options[key]]),
  ) as Partial<Pick<Options, Key>>;
}
