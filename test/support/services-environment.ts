/**
 * The Jest environment of the tiers with services (`jest.config.js`). A test file names what it
 * needs in its first docblock, `@services dynamodb-local`; each service starts once per worker,
 * with the first file naming it, and ends with the worker. A file naming none starts none. The
 * unit tier runs in Node's plain environment, where asking for a service fails saying how to move
 * the test to a tier that has it.
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
