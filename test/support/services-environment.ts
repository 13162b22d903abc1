/**
 * The Jest environment of the tiers that use services (`*.integration.test.ts` and the others,
 * see `jest.config.js`). A test file names the services it needs in its first docblock:
 *
 *     @services dynamodb-local
 *
 * Each named service starts once per Jest worker, when the first file that names it starts, and
 * ends with the worker (DynamoDB Local's guard stops the JVM when its parent goes). A file that
 * names none starts none, so running one such test never boots a JVM. The unit tier runs in
 * Node's plain environment, where asking for a service fails with a line saying how to move the
 * test to a tier that has it.
 */
import type { EnvironmentContext, JestEnvironmentConfig } from '@jest/environment';
import { TestEnvironment } from 'jest-environment-node';
import { type DynamoDbLocal, startDynamoDbLocal } from '../../local/dynamodb-local.ts';
import { testStoreUrlVariable } from './test-store.ts';

/** The services a test file may name, and how each is started for the worker. */
const services = {
  /** One in-memory DynamoDB Local (shared database); each file makes its own tables. */
  'dynamodb-local': async (): Promise<Record<string, string>> => {
    dynamoDbLocal ??= startDynamoDbLocal();
    return { [testStoreUrlVariable]: (await dynamoDbLocal).url };
  },
} as const;

let dynamoDbLocal: Promise<DynamoDbLocal> | undefined;

export default class ServicesEnvironment extends TestEnvironment {
  private readonly wanted: readonly string[];

  constructor(config: JestEnvironmentConfig, context: EnvironmentContext) {
    super(config, context);
    const pragma = context.docblockPragmas.services;
    this.wanted = (Array.isArray(pragma) ? pragma : [pragma ?? ''])
      .flatMap((value) => value.split(/[\s,]+/))
      .filter((name) => name !== '');
    for (const name of this.wanted) {
      if (!Object.hasOwn(services, name)) {
        throw new Error(
          `${context.testPath}: unknown service "${name}" in @services (known: ${Object.keys(services).join(', ')}).`,
        );
      }
    }
  }

  override async setup(): Promise<void> {
    await super.setup();
    for (const name of this.wanted) {
      const variables = await services[name as keyof typeof services]();
      Object.assign(this.global.process.env, variables);
    }
  }
}
