/**
 * Tests run as native ES modules (middy is ESM-only, and the Lambda bundles are ESM) on the
 * Lambda runtime's Node.js major; swc strips the types, `tsc --noEmit` checks them.
 * @type {import('jest').Config}
 */
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2023' },
        module: { type: 'es6' },
      },
    ],
  },
  testTimeout: 30_000,
  // One in-memory DynamoDB Local for the whole run: the JVM starts once, each file makes its own table.
  globalSetup: '<rootDir>/test/support/dynamodb-local-setup.ts',
  globalTeardown: '<rootDir>/test/support/dynamodb-local-teardown.ts',
};
