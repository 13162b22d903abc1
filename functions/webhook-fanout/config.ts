/**
 * The fan-out's settings: `DELIVERY_QUEUE_URLS`, `SUBSCRIPTIONS` (the stage's subscribers, a JSON
 * array of `{name, events, format}`), and the webhook endpoint stores' (`fanout-dependencies.ts`).
 */
import { readConfiguration } from '../shared/platform/configuration.ts';
import { fanoutSettingsOf, fanoutVariables } from '../webhook-endpoints/fanout-dependencies.ts';

export function readFanoutConfig(environment: NodeJS.ProcessEnv) {
  return fanoutSettingsOf(
    readConfiguration('webhook-fanout', fanoutVariables(environment), environment),
  );
}
