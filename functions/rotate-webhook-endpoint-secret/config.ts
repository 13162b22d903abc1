/**
 * The settings of `POST /webhook-endpoints/{endpointId}/secret/rotate`: the endpoint functions' (`ENDPOINTS_TABLE_NAME`,
 * `WEBHOOK_LOG_TABLE_NAME`, `DYNAMODB_ENDPOINT`, `CORS_ALLOWED_ORIGINS`) and the KMS key that
 * seals the secrets (`SECRETS_KEY_ID`; `KMS_ENDPOINT` for an emulator under `sam local`).
 */
import { readConfiguration } from '../shared/platform/configuration.ts';
import {
  endpointFunctionSettingsOf,
  endpointFunctionVariables,
  secretsKeySettingsOf,
  secretsKeyVariables,
} from '../webhook-endpoints/endpoint-config.ts';

export function readConfig(environment: NodeJS.ProcessEnv) {
  const variables = readConfiguration(
    'rotate-webhook-endpoint-secret',
    { ...endpointFunctionVariables, ...secretsKeyVariables },
    environment,
  );
  return { ...endpointFunctionSettingsOf(variables), ...secretsKeySettingsOf(variables) };
}
