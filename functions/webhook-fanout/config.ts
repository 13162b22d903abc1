/**
 * The fan-out's settings: `DELIVERY_QUEUE_URL`, `SUBSCRIPTIONS` (a JSON array of the stage's
 * subscribers, `{name, events, format}`), and the webhook endpoint stores (`ENDPOINTS_TABLE_NAME`,
 * `WEBHOOK_LOG_TABLE_NAME`, `DYNAMODB_ENDPOINT`).
 */
import { readConfiguration } from '../shared/platform/configuration.ts';
import { fanoutSettingsOf, fanoutVariables } from '../webhook-endpoints/fanout-dependencies.ts';

export function readFanoutConfig(environment: NodeJS.ProcessEnv) {
  return fanoutSettingsOf(
    readConfiguration('webhook-fanout', fanoutVariables(environment), environment),
  );
}
