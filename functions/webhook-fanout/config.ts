/**
 * The fan-out's settings: `DELIVERY_QUEUE_URL` and `SUBSCRIPTIONS` (a JSON array of the stage's
 * subscribers, `{name, events, format}`).
 */
import { readEnvironment } from '../shared/environment.ts';
import { readFanoutSettings } from '../shared/webhooks/queue-deliveries.ts';

/** The configuration from the environment; anything missing fails the cold start. */
export function readFanoutConfig(environment: NodeJS.ProcessEnv) {
  const read = readEnvironment(environment, 'webhook-fanout');
  const config = readFanoutSettings(read);
  read.check();
  return config;
}
