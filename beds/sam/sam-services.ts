/**
 * What `sam local`'s containers call, on this machine at the Docker bridge's gateway: DynamoDB
 * Local, the local issuer's JWKS, moto (SQS, Secrets Manager, S3, KMS, API Gateway) and a
 * verifying webhook receiver; and the `--env-vars` file that gives each function of the template
 * exactly its declared variables (SAM ignores others), a local value where one is needed.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { CreateUsagePlanCommand } from '@aws-sdk/client-api-gateway';
import { CreateKeyCommand } from '@aws-sdk/client-kms';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { CreateSecretCommand } from '@aws-sdk/client-secrets-manager';
import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { routeFunctionNames } from '../../functions/shared/http/routes.ts';
import { createDocumentClient } from '../../functions/shared/platform/dynamodb.ts';
import { startDynamoDbLocal } from '../../local/dynamodb-local.ts';
import { localAuthorizerEnvironment, startJwksServer } from '../../local/jwks-server.ts';
import { ensurePrivateDirectory } from '../../local/private-directory.ts';
import {
  createPlantsTableIfMissing,
  createWebhookEndpointTablesIfMissing,
} from '../../local/tables.ts';
import {
  type LocalTokenOptions,
  loadOrCreateLocalKeys,
  localJwks,
  signLocalToken,
} from '../../local/token-issuer.ts';
import { type MotoServer, startMotoServer } from '../moto-server.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../webhook-receiver.ts';

/** The subscriber the webhook functions' sample events name. */
export const sampleSubscriber = 'audit';

export interface SamServicesOptions {
  /** Where the containers reach this machine (the bridge's gateway); the services bind there. */
  readonly host: string;
  /** The synthesized template whose functions the env-vars file covers. */
  readonly template: SynthesizedTemplate;
  /** Where the env-vars file is written. */
  readonly envVarsFile: string;
  /** The local issuer's keys (created when missing). */
  readonly keysDirectory: string;
  readonly tableName?: string;
}

export interface SamServices {
  readonly envVarsFile: string;
  /** Each function's variables, by logical id, as written to the file. */
  readonly variables: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** DynamoDB Local, as this machine reaches it. */
  readonly dynamoDbUrl: string;
  readonly tableName: string;
  /** The webhook endpoint tables beside it. */
  readonly endpointTables: { readonly endpoints: string; readonly log: string };
  readonly moto: MotoServer;
  /** The queues the fan-out sends to and the delivery sends retries and dead letters to. */
  readonly queues: {
    readonly deliveries: string;
    readonly retries: string;
    readonly deadLetters: string;
  };
  readonly receiver: WebhookReceiver;
  signToken(options?: LocalTokenOptions): string;
  stop(): Promise<void>;
}

/** A synthesized template's functions: logical id → declared variables and CDK path. */
export interface SynthesizedTemplate {
  readonly Resources: Readonly<
    Record<
      string,
      {
        readonly Type: string;
        readonly Metadata?: Readonly<Record<string, unknown>>;
        readonly Properties?: {
          readonly Environment?: { readonly Variables?: Readonly<Record<string, unknown>> };
        };
      }
    >
  >;
}

/** The usage plan the authorizer adds client keys to, in moto. */
export const samUsagePlanName = 'plant-store-sam-clients';

/** Starts everything; on a failure, stops whatever had started before rethrowing. */
export async function startSamServices(options: SamServicesOptions): Promise<SamServices> {
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  };
  try {
    const tableName = options.tableName ?? 'plants';
    // Shared database: the containers sign with SAM's own credentials, whatever they are.
    const store = await startDynamoDbLocal();
    stops.push(() => store.stop());
    const documentClient = createDocumentClient({ url: store.url });
    const endpointTables = { endpoints: 'webhook-endpoints', log: 'webhook-log' };
    await createPlantsTableIfMissing(documentClient, tableName);
    await createWebhookEndpointTablesIfMissing(documentClient, endpointTables);
    documentClient.destroy();

    const keys = loadOrCreateLocalKeys(options.keysDirectory);
    const jwks = await startJwksServer(localJwks(keys), options.host);
    stops.push(() => jwks.close());
    const moto = await startMotoServer(options.host);
    stops.push(() => moto.stop());
    const queue = async (name: string) =>
      (await moto.sqs.send(new CreateQueueCommand({ QueueName: name }))).QueueUrl ?? '';
    const queues = {
      deliveries: await queue('deliveries'),
      retries: await queue('retries'),
      deadLetters: await queue('dead-letters'),
    };
    const bucket = 'stream-failures';
    await moto.s3.send(new CreateBucketCommand({ Bucket: bucket }));
    const secretValue = randomBytes(36).toString('base64');
    const { ARN: secretArn = '' } = await moto.secretsManager.send(
      new CreateSecretCommand({
        Name: `plant-store/local/webhooks/${sampleSubscriber}`,
        SecretString: secretValue,
      }),
    );
    const receiver = await startWebhookReceiver(`whsec_${secretValue}`, 0, options.host);
    stops.push(() => receiver.stop());
    await moto.apiGateway.send(new CreateUsagePlanCommand({ name: samUsagePlanName }));
    const { KeyMetadata } = await moto.kms.send(
      new CreateKeyCommand({ Description: 'Plant Store local: webhook endpoint secrets' }),
    );

    const local: LocalValues = {
      // The webhook endpoint stores, for every function that declares them.
      '*': {
        ENDPOINTS_TABLE_NAME: endpointTables.endpoints,
        WEBHOOK_LOG_TABLE_NAME: endpointTables.log,
        DYNAMODB_ENDPOINT: reachable(store.url, options.host),
        SECRETS_KEY_ID: KeyMetadata?.KeyId ?? '',
        KMS_ENDPOINT: moto.url,
        DELIVERY_QUEUE_URLS: queues.deliveries,
        // A stage that samples traces sends spans to X-Ray: none from a container here.
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '',
      },
      route: { TABLE_NAME: tableName, DYNAMODB_ENDPOINT: reachable(store.url, options.host) },
      // The authorizer adds each client's key to this plan, as it does to the stage's.
      Authorizer: {
        ...localAuthorizerEnvironment(jwks.jwksUri),
        USAGE_PLAN_NAME: samUsagePlanName,
        API_GATEWAY_ENDPOINT: moto.url,
      },
      WebhookFanout: {
        DELIVERY_QUEUE_URLS: queues.deliveries,
        SUBSCRIPTIONS: JSON.stringify([
          { name: sampleSubscriber, events: ['plant.created'], format: 'plant' },
        ]),
      },
      DeliverWebhook: {
        RETRY_QUEUE_URL: queues.retries,
        DEAD_LETTER_QUEUE_URL: queues.deadLetters,
        SUBSCRIBERS: JSON.stringify([{ name: sampleSubscriber, url: receiver.url, secretArn }]),
        SECRETS_MANAGER_ENDPOINT: moto.url,
      },
      ReplayStreamFailures: {
        STREAM_FAILURES_BUCKET: bucket,
        DELIVERY_QUEUE_URLS: queues.deliveries,
        SUBSCRIPTIONS: JSON.stringify([
          { name: sampleSubscriber, events: ['plant.created'], format: 'plant' },
        ]),
        S3_ENDPOINT: moto.url,
      },
    };
    const variables = samEnvironmentVariables(options.template, local);
    ensurePrivateDirectory(dirnameOf(options.envVarsFile));
    writeFileSync(options.envVarsFile, `${JSON.stringify(variables, null, 2)}\n`, { mode: 0o600 });
    return {
      envVarsFile: options.envVarsFile,
      variables,
      dynamoDbUrl: store.url,
      tableName,
      endpointTables,
      moto,
      queues,
      receiver,
      signToken: (tokenOptions) => signLocalToken(keys, tokenOptions),
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/**
 * The local values by function construct id (`route` for every function of the route table,
 * `*` for every function that declares the variable).
 */
type LocalValues = Readonly<Record<string, Readonly<Record<string, string>>>>;

/** The route functions' construct ids, as the stack names them: `createPlant` → `CreatePlant`. */
const routeConstructIds = new Set(
  routeFunctionNames.map((name) => `${name.charAt(0).toUpperCase()}${name.slice(1)}`),
);

/**
 * Each function of the template with exactly its declared variables: the local value where
 * `local` has one for it (by its construct id, the route functions' under `route`, any under `*`), else the
 * template's own when it is a plain string (a setting, such as the stage's CORS origins).
 * @throws Error naming a declared variable that has neither.
 */
export function samEnvironmentVariables(
  template: SynthesizedTemplate,
  local: LocalValues,
): Record<string, Record<string, string>> {
  const variables: Record<string, Record<string, string>> = {};
  for (const [logicalId, resource] of Object.entries(template.Resources)) {
    if (resource.Type !== 'AWS::Lambda::Function') continue;
    const constructId = String(resource.Metadata?.['aws:cdk:path'] ?? '').split('/')[1] ?? '';
    const declared = resource.Properties?.Environment?.Variables ?? {};
    const values = {
      ...local['*'],
      ...local[routeConstructIds.has(constructId) ? 'route' : constructId],
    };
    variables[logicalId] = Object.fromEntries(
      Object.entries(declared).map(([name, value]) => {
        const chosen = values[name] ?? (typeof value === 'string' ? value : undefined);
        if (chosen === undefined) {
          throw new Error(
            `No local value for ${constructId}'s ${name} (the template's is not a string).`,
          );
        }
        return [name, chosen];
      }),
    );
  }
  return variables;
}

/** An endpoint on 127.0.0.1 (DynamoDB Local listens on every interface) as a container sees it. */
function reachable(endpoint: string, host: string): string {
  const url = new URL(endpoint);
  url.hostname = host;
  return url.origin;
}

function dirnameOf(file: string): string {
  return file.slice(0, file.lastIndexOf('/')) || '.';
}
