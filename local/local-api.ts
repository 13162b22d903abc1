/**
 * The whole Plant Store on one machine: DynamoDB Local (or a store you name), the development
 * token issuer's JWKS, the authorizer and the functions' handlers, the API Gateway stand-in in
 * front of them, and the webhook pipeline (`local-webhooks.ts`). `start.ts` is its command line;
 * tests start it in-process on a free port.
 */

import { readAuthorizerConfig } from '../functions/authorizer/config.ts';
import { createHandler as createAuthorizerHandler } from '../functions/authorizer/create-handler.ts';
import { functionDisplayName, routes } from '../functions/shared/http/routes.ts';
import { createDocumentClient } from '../functions/shared/platform/dynamodb.ts';
import { createLogger, type Logger } from '../functions/shared/platform/logger.ts';
import {
  type EndpointUrlPolicy,
  localUrlPolicy,
} from '../functions/webhook-endpoints/endpoint-url.ts';
import { localSecretBox } from '../functions/webhook-endpoints/secret-box.ts';
import { functionSettings } from '../infra/function-settings.ts';
import { resolveStageConfig } from '../infra/stages.ts';
import { routeThrottling } from '../infra/throttling.ts';
import { type ApiGateway, type ApiGatewayOptions, startApiGateway } from './api-gateway/gateway.ts';
import { createDocsPages } from './docs-page.ts';
import { type DynamoDbLocal, startDynamoDbLocal } from './dynamodb-local.ts';
import { loadOrCreateEndpointSecretsKey } from './endpoint-secrets-key.ts';
import { localAuthorizerEnvironment, startJwksServer } from './jwks-server.ts';
import {
  type LocalWebhooks,
  type LocalWebhooksOptions,
  startLocalWebhooks,
} from './local-webhooks.ts';
import { loadRouteHandlerFactories, type RouteHandlerFactory } from './route-functions.ts';
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
  readonly dynamoDbEndpoint?: string;
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
}

export interface LocalWebhookOptions
  extends Partial<
    Pick<
      LocalWebhooksOptions,
      'subscribers' | 'retrySchedule' | 'timeoutMilliseconds' | 'pollIntervalMilliseconds'
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
  readonly storeEndpoint: string;
  /** The JVM's process id when this local API started DynamoDB Local. */
  readonly dynamoDbLocalPid: number | undefined;
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
    for (const stop of stops.splice(0).reverse()) await stop();
  };

  try {
    const keys = loadOrCreateLocalKeys(options.keysDirectory);
    // The JVM takes a second or two to start: serve the keys meanwhile. Settle both before
    // failing, so that whichever did start is stopped.
    const [storeStart, jwksStart] = await Promise.allSettled([
      startStore(options, stops),
      startJwksServer(localJwks(keys)).then((server) => {
        stops.push(() => server.close());
        return server;
      }),
    ]);
    if (storeStart.status === 'rejected') throw storeStart.reason;
    if (jwksStart.status === 'rejected') throw jwksStart.reason;
    const dynamoDbLocal = storeStart.value;
    const jwksServer = jwksStart.value;
    const storeEndpoint = dynamoDbLocal?.endpoint ?? (options.dynamoDbEndpoint as string);

    const credentials = dynamoDbLocal?.credentials;
    const documentClient = createDocumentClient({
      endpoint: storeEndpoint,
      ...(credentials === undefined ? {} : { credentials }),
    });
    stops.push(async () => documentClient.destroy());
    const endpointTables = {
      endpointsTableName: `${tableName}-webhook-endpoints`,
      logTableName: `${tableName}-webhook-log`,
    };
    await Promise.all([
      createPlantsTableIfMissing(documentClient, tableName),
      createWebhookEndpointTablesIfMissing(documentClient, {
        endpoints: endpointTables.endpointsTableName,
        log: endpointTables.logTableName,
      }),
    ]);
    const webhookOptions = options.webhooks ?? {};
    const secretBox = localSecretBox(loadOrCreateEndpointSecretsKey(options.keysDirectory));
    const urlPolicy = webhookOptions.endpointUrlPolicy ?? localUrlPolicy;
    const webhooks = await startLocalWebhooks({
      subscribers: webhookOptions.subscribers ?? [],
      ...pick(webhookOptions, ['retrySchedule', 'timeoutMilliseconds', 'pollIntervalMilliseconds']),
      endpoints: {
        stores: { documentClient, ...endpointTables },
        secretBox,
        urlPolicy,
        ...pick(webhookOptions, ['now', 'failingLimitMilliseconds']),
      },
      storeUrl: storeEndpoint,
      ...(credentials === undefined ? {} : { credentials }),
      ...(options.webhookDataDirectory === undefined
        ? {}
        : { dataDirectory: options.webhookDataDirectory }),
      documentClient,
      tableName,
      logger: logger.child({ component: 'webhooks' }),
    });
    stops.push(() => webhooks.stop());

    const handlerFactories = await loadRouteHandlerFactories();
    // The deployed stage whose budgets each method's throttling imitates, unless it is off.
    const stage =
      options.throttlingStage === 'off' ? undefined : resolveStageConfig(options.throttlingStage);
    const gateway: ApiGateway = await startApiGateway({
      port: options.port ?? 3000,

      authorizerTimeoutMilliseconds: functionSettings.authorizer.timeoutSeconds * 1000,
      logger,
      allowedOrigins: options.allowedOrigins ?? [],
      localPages: createDocsPages(),
      ...options.gateway,
      authorizer: createAuthorizerHandler(
        readAuthorizerConfig(localAuthorizerEnvironment(jwksServer.jwksUri)),
        { logger: logger.child({ function: 'authorizer' }) },
      ),
      routes: routes.map((route) => {
        const functionName = functionDisplayName(route.function);
        return {
          httpMethod: route.method,
          resourcePath: route.path,
          functionName,
          timeoutMilliseconds: functionSettings[route.function].timeoutSeconds * 1000,
          ...(stage === undefined
            ? {}
            : {
                throttling: routeThrottling(route, {
                  plants: stage.throttling,
                  ...(stage.webhookEndpointThrottling === undefined
                    ? {}
                    : { webhookEndpoints: stage.webhookEndpointThrottling }),
                }),
              }),
          handler: (handlerFactories.get(route.function) as RouteHandlerFactory)({
            documentClient,
            tableName,
            ...endpointTables,
            secretBox,
            urlPolicy,
            deliveries: webhooks.deliveries,
            ...pick(webhookOptions, ['now']),
            allowedOrigins: options.allowedOrigins ?? [],
            logger: logger.child({ function: functionName }),
          }),
        };
      }),
    });
    stops.push(() => gateway.close());

    return {
      url: gateway.url,
      port: gateway.port,
      storeEndpoint,
      dynamoDbLocalPid: dynamoDbLocal?.pid,
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
 * Starts DynamoDB Local unless the options name a store (`undefined` then), its data private to
 * a key id kept in the data folder (or made for this run when it keeps nothing).
 */
async function startStore(
  options: LocalApiOptions,
  stops: (() => Promise<void>)[],
): Promise<(DynamoDbLocal & { credentials: StoreCredentials }) | undefined> {
  if (options.dynamoDbEndpoint !== undefined) return undefined;
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
