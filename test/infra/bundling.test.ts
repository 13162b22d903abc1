/**
 * The Lambda bundles as `infra/bundling.ts` builds them: the modules it swaps out stay out, and
 * the swapped-in ones still sign a create with the Lambda environment's credentials.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { build, type Metafile } from 'esbuild';
import { routeFunctionNames } from '../../functions/shared/http/routes.ts';
import { createBuildOptions } from '../../infra/bundling.ts';
import { type FunctionSettings, functionSettings } from '../../infra/function-settings.ts';
import { repositoryRoot } from '../../infra/plant-store-function.ts';

const run = promisify(execFile);
const outputDirectory = mkdtempSync(join(tmpdir(), 'plant-store-bundling-'));
const bundlePath = join(outputDirectory, 'create-plant.mjs');
let metafile: Metafile;

beforeAll(async () => {
  const result = await build({
    ...createBuildOptions(join(repositoryRoot, 'functions/create-plant/handler.ts'), bundlePath),
    absWorkingDir: repositoryRoot,
    metafile: true,
    logLevel: 'silent',
  });
  metafile = result.metafile;
});

afterAll(() => {
  rmSync(outputDirectory, { recursive: true, force: true });
});

describe('the create-plant bundle', () => {
  it('leaves out what Lambda never runs: other credential providers, event streams, the JavaScript SHA-256, endpoint discovery, config files', () => {
    const inputs = Object.keys(metafile.inputs);
    // What is in the bundle: a module read but tree-shaken away adds nothing.
    const [output] = Object.values(metafile.outputs);
    const written = Object.entries(output?.inputs ?? {}).filter(
      ([, { bytesInOutput }]) => bytesInOutput,
    );
    const emitted = written.map(([input]) => input);
    for (const excluded of [
      '@aws-sdk/credential-provider-node/',
      '@aws-sdk/credential-provider-ini/',
      '@aws-sdk/credential-provider-sso/',
      '@aws-sdk/nested-clients/',
      '@smithy/core/dist-es/submodules/event-streams/',
      '@smithy/core/dist-es/submodules/checksum/sha256/',
      'mnemonist/',
      '@aws-sdk/endpoint-cache/',
      '@aws-sdk/middleware-endpoint-discovery/',
      '@smithy/core/dist-es/submodules/config/shared-ini-file-loader/',
      '@smithy/core/dist-es/submodules/config/defaults-mode/resolveDefaultsModeConfig',
      '@aws/lambda-invoke-store/',
    ]) {
      expect(emitted.filter((input) => input.includes(excluded))).toEqual([]);
    }
    expect(inputs).toContain('infra/bundle-aliases/lambda-credentials.ts');
    expect(inputs).toContain('infra/bundle-aliases/no-endpoint-discovery.ts');
    expect(inputs).toContain('infra/bundle-aliases/lambda-config.ts');
    expect(inputs).toContain('infra/bundle-aliases/node-checksum.ts');
  });

  it('loads node:http with require, never through an ES module import', () => {
    const [output] = Object.values(metafile.outputs);
    const imported = output?.imports.map((entry) => entry.path) ?? [];
    expect(imported).toContain('node:https');
    expect(imported).not.toContain('node:http');
  });

  it('takes node:process from the global process, never through an ES module import', () => {
    const [output] = Object.values(metafile.outputs);
    const imported = output?.imports.map((entry) => entry.path) ?? [];
    expect(imported).not.toContain('node:process');
    expect(imported).not.toContain('process');
    expect(Object.keys(metafile.inputs)).toContain('infra/bundle-aliases/node-process.ts');
  });

  it('sends the invocation’s trace id from the runtime’s invoke store, or else from the environment', async () => {
    const traced = async (store: string) =>
      (
        await invokeBundle(`globalThis.awslambda = ${store};`, {
          AWS_LAMBDA_FUNCTION_NAME: 'create-plant',
          _X_AMZN_TRACE_ID: 'Root=1-from-environment',
        })
      ).received[0];
    expect((await traced('{}'))?.['x-amzn-trace-id']).toBe('Root=1-from-environment');
    const fromStore = await traced(
      "{ InvokeStore: { getXRayTraceId: () => 'Root=1-from-store', getTraceparent: () => '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } }",
    );
    expect(fromStore?.['x-amzn-trace-id']).toBe('Root=1-from-store');
    expect(fromStore?.traceparent).toBe('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
  });

  it('signs its put with the credentials of the Lambda environment and answers 200, loading only what it needs', async () => {
    const { response, received, loaded } = await invokeBundle('', {});
    expect(response).toMatchObject({ statusCode: 200, body: '{"name":"Fern"}' });
    // Neither web streams (the SDK's response reader) nor the process report (the ESM facade
    // of node:process) are loaded on the way to the first answer.
    expect(loaded).toEqual([]);
    expect(received).toHaveLength(1);
    expect(received[0]?.authorization).toContain('Credential=ASIABUNDLETEST/');
    expect(received[0]?.['x-amz-security-token']).toBe('bundle-test-session');
  });
});

describe('every route function’s bundle', () => {
  /** The action each command of the function's own code calls. */
  const actionOfCommand: Readonly<Record<string, string>> = {
    Get: 'dynamodb:GetItem',
    Put: 'dynamodb:PutItem',
    Update: 'dynamodb:UpdateItem',
    Delete: 'dynamodb:DeleteItem',
    Scan: 'dynamodb:Scan',
    Query: 'dynamodb:Query',
    BatchGet: 'dynamodb:BatchGetItem',
    BatchWrite: 'dynamodb:BatchWriteItem',
    GenerateDataKey: 'kms:GenerateDataKey',
    Decrypt: 'kms:Decrypt',
    SendMessageBatch: 'sqs:SendMessage',
  };

  /** Every action a function's role allows it: on the plants, the endpoint stores, the key. */
  function grantedActions(settings: FunctionSettings): string[] {
    const { endpointAccess: endpoints } = settings;
    return [
      ...(settings.tableActions ?? []),
      ...(endpoints?.tableActions ?? []),
      ...(endpoints?.logActions ?? []),
      ...(endpoints?.keyActions ?? []),
      ...(endpoints?.sendsDeliveries ? ['sqs:SendMessage'] : []),
    ];
  }

  it.each(routeFunctionNames.map((name) => [name]))(
    '%s calls only actions its role grants (functionSettings)',
    async (name) => {
      // Unminified, so each module's code that is left after tree-shaking keeps its path comment
      // and its commands' names: what the function's own code can send, function by function.
      const { outputFiles } = await build({
        ...createBuildOptions(join(repositoryRoot, functionSettings[name].entry), bundlePath),
        absWorkingDir: repositoryRoot,
        minify: false,
        write: false,
        logLevel: 'silent',
      });
      const sections = (outputFiles[0]?.text ?? '').split(/^\/\/ (?=\S+\.[cm]?[jt]s$)/m);
      const actions = sections
        .filter((section) => section.startsWith('functions/'))
        .flatMap((section) => [
          ...[...section.matchAll(/new (\w+?)Command\d*\(/g)]
            .filter(([, command]) => command !== 'TransactWrite')
            .map(
              ([, command]) =>
                actionOfCommand[command as string] ?? `an unmapped ${command}Command`,
            ),
          // A transaction's items need their own actions (AWS: "Using IAM with DynamoDB
          // transactions"): each `Put:`, `Update:` or `Delete:` of the module's transactions.
          ...(section.includes('new TransactWriteCommand')
            ? [...section.matchAll(/\b(Put|Update|Delete): \{/g)].map(
                ([, kind]) => actionOfCommand[kind as string] as string,
              )
            : []),
        ]);
      expect(actions.length).toBeGreaterThan(0);
      const granted = grantedActions(functionSettings[name]);
      for (const action of actions) {
        expect([name, granted]).toEqual([name, expect.arrayContaining([action])]);
      }
    },
  );
});

/**
 * Runs the bundle's handler once in a fresh Node.js process (after `prelude`) against a store
 * that answers `{}`: its response, the headers the store received, and the built-ins of those
 * the bundle should never load that it loaded.
 */
async function invokeBundle(prelude: string, environment: Record<string, string>) {
  const received: IncomingHttpHeaders[] = [];
  const store = createServer((request, response) => {
    received.push(request.headers);
    request.resume().on('end', () => {
      response.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => store.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = store.address() as AddressInfo;
    const event = {
      httpMethod: 'POST',
      path: '/plants',
      headers: { 'Content-Type': 'application/json' },
      body: '{"id": 7, "name": "Fern"}',
      isBase64Encoded: false,
      requestContext: { requestId: 'bundle-test' },
    };
    const script =
      prelude +
      `const { handler } = await import(${JSON.stringify(bundlePath)});` +
      `const response = await handler(${JSON.stringify(event)}, { awsRequestId: 'bundle-test' });` +
      // Node.js's record of the built-ins it has loaded (the cold-start cost the bundle avoids).
      'const loaded = process.moduleLoadList.filter((name) => /webstreams|process\\/report/.test(name));' +
      'console.log(JSON.stringify({ response, loaded }));';
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
      env: {
        AWS_ACCESS_KEY_ID: 'ASIABUNDLETEST',
        AWS_SECRET_ACCESS_KEY: 'bundle-test-secret',
        AWS_SESSION_TOKEN: 'bundle-test-session',
        AWS_REGION: 'eu-west-1',
        TABLE_NAME: 'plants',
        DYNAMODB_ENDPOINT: `http://127.0.0.1:${port}`,
        ...environment,
      },
    });
    const { response, loaded } = JSON.parse(stdout.trim().split('\n').at(-1) ?? '');
    return { response, received, loaded };
  } finally {
    await new Promise((resolve) => store.close(resolve));
  }
}

describe('the client settings that stand in for the SDK’s', () => {
  it('reads a setting from the environment once, else its default, and refuses to guess a mode', async () => {
    const { loadConfig, resolveDefaultsModeConfig } = await import(
      '../../infra/bundle-aliases/lambda-config.ts'
    );
    const { resolveEndpointDiscoveryConfig } = await import(
      '../../infra/bundle-aliases/no-endpoint-discovery.ts'
    );
    const saved = { ...process.env };
    try {
      let reads = 0;
      const retries = loadConfig({
        environmentVariableSelector: (environment) => {
          reads += 1;
          const value = Number(environment.AWS_MAX_ATTEMPTS);
          if (Number.isNaN(value)) throw new Error('not a number');
          return environment.AWS_MAX_ATTEMPTS === undefined ? undefined : value;
        },
        default: 3,
      });
      process.env.AWS_MAX_ATTEMPTS = '5';
      expect([await retries(), await retries(), reads]).toEqual([5, 5, 1]);
      // A value the selector refuses, or none: the default, as the SDK's chain gives it.
      for (const value of ['many', undefined]) {
        if (value === undefined) delete process.env.AWS_MAX_ATTEMPTS;
        else process.env.AWS_MAX_ATTEMPTS = value;
        const fresh = loadConfig({
          environmentVariableSelector: (environment) => {
            if (environment.AWS_MAX_ATTEMPTS === 'many') throw new Error('not a number');
            return environment.AWS_MAX_ATTEMPTS;
          },
          default: async () => 'default',
        });
        expect(await fresh()).toBe('default');
      }
      delete process.env.AWS_DEFAULTS_MODE;
      await expect(resolveDefaultsModeConfig()()).resolves.toBe('legacy');
      process.env.AWS_DEFAULTS_MODE = 'auto';
      await expect(resolveDefaultsModeConfig()()).rejects.toThrow(/not bundled/);
      const config = { region: 'eu-west-1' };
      expect(resolveEndpointDiscoveryConfig(config)).toBe(config);
    } finally {
      process.env = saved;
    }
  });
});

describe('the SHA-256 that stands in for the SDK’s', () => {
  it('digest and sign every kind of data as the SDK’s own do', async () => {
    const lean = await import('../../infra/bundle-aliases/node-checksum.ts');
    const sdk = await import('@smithy/core/checksum');
    type Data = string | Uint8Array | ArrayBuffer | DataView;
    type Hash = new (secret?: Data) => { update(data: Data): void; digest(): Promise<Uint8Array> };
    const digest = async (Algorithm: Hash, input: Data, secret?: Data) => {
      const hash = new Algorithm(secret);
      hash.update(input);
      hash.update(' and more');
      return Buffer.from(await hash.digest()).toString('hex');
    };
    const bytes = new TextEncoder().encode('Monstera deliciosa');
    // What the clients hash (the SDK's own takes no ArrayBuffer there).
    for (const input of ['Monstera deliciosa', bytes, new DataView(bytes.buffer, 3, 8)]) {
      expect(await digest(lean.Sha256, input)).toBe(await digest(sdk.Sha256, input));
    }
    // An HMAC, keyed by each kind of data, as SigV4 derives its keys.
    for (const key of ['key', bytes.subarray(2, 9), bytes.slice().buffer]) {
      expect(await digest(lean.Sha256, 'x', key)).toBe(await digest(sdk.Sha256, 'x', key));
    }
    // The rest is the SDK's own (its ES module; Jest loads its CommonJS one).
    const { Md5, Crc32 } = lean as unknown as Record<'Md5' | 'Crc32', Hash>;
    expect(await digest(Md5, bytes)).toBe(await digest(sdk.Md5, bytes));
    expect(await digest(Crc32, bytes)).toBe(await digest(sdk.Crc32, bytes));
  });
});
