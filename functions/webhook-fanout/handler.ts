/** Lambda entry of the webhook fan-out, configured once, at cold start. */
import { createSqsClient } from '../shared/webhooks/delivery-queue.ts';
import { fanoutDependenciesOf } from '../webhook-endpoints/fanout-dependencies.ts';
import { readFanoutConfig } from './config.ts';
import { createHandler } from './create-handler.ts';

export const handler = createHandler(
  fanoutDependenciesOf(readFanoutConfig(process.env), createSqsClient()),
);
