/**
 * The settings of `POST /webhook-endpoints`: the endpoint functions' (`ENDPOINTS_TABLE_NAME`,
 * `WEBHOOK_LOG_TABLE_NAME`, `DYNAMODB_ENDPOINT`, `CORS_ALLOWED_ORIGINS`) and the KMS key that
 * seals the secrets (`SECRETS_KEY_ID`; `KMS_ENDPOINT` for an emulator under `sam local`).
 */
import {
  readEndpointFunctionConfig,
  readEndpointUrlPolicy,
  readSecretsKeySettings,
} from '../webhook-endpoints/endpoint-config.ts';

/** The configuration from the environment; anything missing fails the cold start. */
export function readConfig(environment: NodeJS.ProcessEnv) {
  return readEndpointFunctionConfig('create-webhook-endpoint', environment, (read) => ({
    ...readSecretsKeySettings(read),
    urlPolicy: readEndpointUrlPolicy(read, environment),
  }));
}
