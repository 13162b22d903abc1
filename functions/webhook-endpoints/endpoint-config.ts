/** The endpoint stores and the key sealing their secrets, as the functions' variables name them. */
import { KMSClient } from '@aws-sdk/client-kms';
import type * as v from 'valibot';
import { allowedOriginsVariable } from '../shared/http/cors.ts';
import { optional, parsed, readConfiguration, required } from '../shared/platform/configuration.ts';
import { createDocumentClient } from '../shared/platform/dynamodb.ts';
import {
  deployedUrlPolicy,
  type EndpointUrlPolicy,
  localUrlPolicy,
} from './endpoint-url-policy.ts';
import { type DataKeyStore, kmsOpener, kmsSecretBox, type SecretBox } from './secret-box.ts';

/** Where the endpoints and the webhook log are. */
export interface EndpointStoreSettings {
  readonly endpointsTableName: string;
  readonly logTableName: string;
  /** A DynamoDB-compatible endpoint (`sam local`); AWS's when absent. */
  readonly dynamoDbUrl: string | undefined;
}

/** `ENDPOINTS_TABLE_NAME`, `WEBHOOK_LOG_TABLE_NAME` (both required) and `DYNAMODB_ENDPOINT`. */
export const endpointStoreVariables = {
  ENDPOINTS_TABLE_NAME: required(),
  WEBHOOK_LOG_TABLE_NAME: required(),
  DYNAMODB_ENDPOINT: optional,
};

/** The stores' settings of variables read with {@link endpointStoreVariables}. */
export function endpointStoreSettingsOf(
  variables: VariablesOf<typeof endpointStoreVariables>,
): EndpointStoreSettings {
  return {
    endpointsTableName: variables.ENDPOINTS_TABLE_NAME,
    logTableName: variables.WEBHOOK_LOG_TABLE_NAME,
    dynamoDbUrl: variables.DYNAMODB_ENDPOINT,
  };
}

/** `SECRETS_KEY_ID` (the KMS key sealing endpoint secrets) and `KMS_ENDPOINT` (`sam local`). */
export const secretsKeyVariables = { SECRETS_KEY_ID: required(), KMS_ENDPOINT: optional };

/** The key's settings of variables read with {@link secretsKeyVariables}. */
export function secretsKeySettingsOf(variables: VariablesOf<typeof secretsKeyVariables>) {
  return { secretsKeyId: variables.SECRETS_KEY_ID, kmsUrl: variables.KMS_ENDPOINT };
}

type SecretsKeySettings = ReturnType<typeof secretsKeySettingsOf>;

function kmsOf(settings: SecretsKeySettings): KMSClient {
  return new KMSClient(settings.kmsUrl === undefined ? {} : { endpoint: settings.kmsUrl });
}

/** Sealing and opening with the settings' key (create, rotate: a kept answer is opened again). */
export function kmsSecretBoxOf(settings: SecretsKeySettings, store: DataKeyStore): SecretBox {
  return kmsSecretBox(kmsOf(settings), settings.secretsKeyId, store);
}

/** Opening with the settings' key (the secret's answer, the delivery). */
export function kmsOpenerOf(
  settings: SecretsKeySettings,
  store: DataKeyStore,
): Pick<SecretBox, 'open'> {
  return kmsOpener(kmsOf(settings), settings.secretsKeyId, store);
}

/** The document client and table names of the stores, for the functions' dependencies. */
export function endpointStoresOf(settings: EndpointStoreSettings) {
  return {
    documentClient: createDocumentClient({ url: settings.dynamoDbUrl }),
    endpointsTableName: settings.endpointsTableName,
    logTableName: settings.logTableName,
  };
}

/** An endpoint function's variables: its tables, `DYNAMODB_ENDPOINT`, `CORS_ALLOWED_ORIGINS`. */
export const endpointFunctionVariables = {
  ...endpointStoreVariables,
  CORS_ALLOWED_ORIGINS: allowedOriginsVariable(),
};

type VariablesOf<Entries extends v.ObjectEntries> = v.InferOutput<
  v.ObjectSchema<Entries, undefined>
>;

/**
 * An endpoint function's stores (their client made) and `CORS_ALLOWED_ORIGINS`, its own `extra` in
 * `variables`; its other clients are made in its `handler.ts`, so each bundle holds only its own.
 */
export function readEndpointFunctionConfig<Extra extends v.ObjectEntries>(
  functionName: string,
  extra: Extra = {} as Extra,
) {
  // One read, so that a start names every problem; typed as the two parts it reads.
  const variables = readConfiguration(
    functionName,
    { ...endpointFunctionVariables, ...extra },
    process.env,
  ) as VariablesOf<typeof endpointFunctionVariables> & VariablesOf<Extra>;
  return {
    ...endpointStoresOf(endpointStoreSettingsOf(variables)),
    allowedOrigins: variables.CORS_ALLOWED_ORIGINS,
    variables,
  };
}

/** {@link readEndpointFunctionConfig} with the key that seals the secrets, as `boxOf` uses it. */
export function readKeyedFunctionConfig<Box, Extra extends v.ObjectEntries>(
  functionName: string,
  boxOf: (settings: SecretsKeySettings, store: DataKeyStore) => Box,
  extra: Extra = {} as Extra,
) {
  const { variables, ...config } = readEndpointFunctionConfig(functionName, {
    ...secretsKeyVariables,
    ...extra,
  });
  const keyVariables = variables as VariablesOf<typeof secretsKeyVariables>;
  const store = { documentClient: config.documentClient, tableName: config.endpointsTableName };
  return { ...config, variables, secretBox: boxOf(secretsKeySettingsOf(keyVariables), store) };
}

/**
 * `WEBHOOK_ENDPOINT_URLS`: `deployed` (the default), or `local` for receivers beside the stage
 * (`npm start`, a stage on an AWS emulator: its functions run on the host), allowed only where
 * `AWS_ENDPOINT_URL` is set: Lambda never sets it, so no variable opens a real stage to loopback.
 */
export function endpointUrlsVariable(environment: Readonly<Record<string, string | undefined>>) {
  return parsed(
    (text): EndpointUrlPolicy => {
      const policy = parseEndpointUrls(text);
      if (policy === localUrlPolicy && !environment.AWS_ENDPOINT_URL?.trim()) {
        throw new Error('may be local only for a stage on an emulator (AWS_ENDPOINT_URL set)');
      }
      return policy;
    },
    { fallback: deployedUrlPolicy },
  );
}

/** `local` (http and loopback allowed) or `deployed` (https, public only). */
export function parseEndpointUrls(text: string): EndpointUrlPolicy {
  if (text === 'local') return localUrlPolicy;
  if (text === 'deployed') return deployedUrlPolicy;
  throw new Error('must be local (http and loopback allowed) or deployed (https, public only)');
}
