/**
 * The settings of `POST /webhook-endpoints`: the endpoint functions' (`ENDPOINTS_TABLE_NAME`,
 * `WEBHOOK_LOG_TABLE_NAME`, `DYNAMODB_ENDPOINT`, `CORS_ALLOWED_ORIGINS`), the KMS key that seals
 * the secrets (`SECRETS_KEY_ID`; `KMS_ENDPOINT` for an emulator under `sam local`) and which URLs
 * an endpoint may have (`WEBHOOK_ENDPOINT_URLS`).
 */
import { readConfiguration } from '../shared/platform/configuration.ts';
import {
  endpointFunctionSettingsOf,
  endpointFunctionVariables,
  endpointUrlsVariable,
  secretsKeySettingsOf,
  secretsKeyVariables,
} from '../webhook-endpoints/endpoint-config.ts';

export function readConfig(environment: NodeJS.ProcessEnv) {
  const variables = readConfiguration(
    'create-webhook-endpoint',
    {
      ...endpointFunctionVariables,
      ...secretsKeyVariables,
      WEBHOOK_ENDPOINT_URLS: endpointUrlsVariable(environment),
    },
    environment,
  );
  return {
    ...endpointFunctionSettingsOf(variables),
    ...secretsKeySettingsOf(variables),
    urlPolicy: variables.WEBHOOK_ENDPOINT_URLS,
  };
}
