/**
 * The test tiers, one Jest project each; a test's tier is the end of its file name:
 *
 * - `*.test.ts` (unit): in-process, no service, no child but Node itself. `npm test`.
 * - `*.integration.test.ts`: in-process against services (DynamoDB Local, moto) and the template
 *   checkers (cfn-lint, cfn-guard), each service named in the file's docblock (`@services
 *   dynamodb-local`) or started by the file itself.
 * - `*.e2e.test.ts`: the Plant Store as its users run it, in child processes (`npm start`, the
 *   local API in a process of its own under load and faults).
 * - `*.browser.test.ts`: Debian's Chromium, headless, through playwright-core.
 * - `*.sam.test.ts`: the SAM CLI and a Docker engine, on the synthesized template.
 * - `*.contract.test.ts`: the HTTP contract, against the target `PLANT_STORE_TARGET` names
 *   (`npm start` by default, `sam local start-api`, or a deployed stage: `npm run smoke`).
 * - `*.deployed.test.ts`: the dev stage deployed by the CDK CLI onto MiniStack (an AWS emulator).
 * - `*.delivery.test.ts`: the pipeline's steps rehearsed on MiniStack.
 * - `*.permissions.test.ts`: the AWS calls those two recorded, evaluated against the templates' IAM.
 *
 * Tests run as native ES modules (middy is ESM-only, and the Lambda bundles are ESM) on the
 * Lambda runtime's Node.js major; swc strips the types, `tsc --noEmit` checks them.
 * @type {import('jest').Config}
 */
const tiers = [
  'integration',
  'e2e',
  'browser',
  'sam',
  'contract',
  'deployed',
  'delivery',
  'permissions',
];

const common = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
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
};

export default {
  // A cap for a test that hangs, not a bound on behaviour: a busy machine stretches every wait.
  testTimeout: 120_000,
  // Jest leaves a core to itself by default, which on two cores is one worker: use both.
  maxWorkers: '100%',
  projects: [
    {
      ...common,
      displayName: 'unit',
      // The stages synthesized once for the run, before any file starts.
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      testMatch: ['**/*.test.ts'],
      testPathIgnorePatterns: tiers.map((tier) => `\\.${tier}\\.test\\.ts$`),
    },
    ...tiers.map((tier) => ({
      ...common,
      displayName: tier,
      ...(tier === 'integration' || tier === 'deployed'
        ? { globalSetup: '<rootDir>/test/support/global-setup.ts' }
        : {}),
      ...(tier === 'contract'
        ? {
            globalSetup: '<rootDir>/test/contract/global-setup.ts',
            globalTeardown: '<rootDir>/test/contract/global-teardown.ts',
          }
        : {}),
      testMatch: [`**/*.${tier}.test.ts`],
      testEnvironment: '<rootDir>/test/support/services-environment.ts',
    })),
  ],
};
