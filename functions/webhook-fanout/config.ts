/**
 * The fan-out's settings: `DELIVERY_QUEUE_URL`, `SUBSCRIPTIONS` (a JSON array of the stage's
 * subscribers, `{name, events, format}`), and the webhook endpoint stores (`ENDPOINTS_TABLE_NAME`,
 * `WEBHOOK_LOG_TABLE_NAME`, `DYNAMODB_ENDPOINT`).
 */
import { readEnvironment } from '../shared/platform/environment.ts';
import { readFanoutSettings } from '../webhook-endpoints/fanout-dependencies.ts';

/** The configuration from the environment; anything missing fails the cold start. */
export function readFanoutConfig(environment: NodeJS.ProcessEnv) {
  const read = readEnvironment(environment, 'webhook-fanout');
  const config = readFanoutSettings(read);
  read.check();
  return config;
}
