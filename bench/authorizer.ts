/**
 * What the authorizer costs: its bundle size (paid at each cold start) and how many tokens one
 * Node.js thread verifies per second once the JWKS is cached (paid at each uncached request).
 * `node bench/authorizer.ts` prints the figures as JSON; `npm run bench` adds its cold start.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { readAuthorizerConfig } from '../functions/authorizer/config.ts';
import { createHandler } from '../functions/authorizer/create-handler.ts';
import { createLogger } from '../functions/shared/platform/logger.ts';
import { createBuildOptions } from '../infra/bundling.ts';
import { localAuthorizerEnvironment, startJwksServer } from '../local/jwks-server.ts';
import { loadOrCreateLocalKeys, localJwks, signLocalToken } from '../local/token-issuer.ts';

export interface AuthorizerFigures {
  /** Minified ESM bundle of functions/authorizer/handler.ts, as the stack bundles it. */
  readonly bundleBytes: number;
  /** Allow decisions per second for RS256 tokens with the JWKS cached, one thread. */
  readonly verificationsPerSecond: number;
  readonly verifications: number;
  readonly durationMilliseconds: number;
}

const handlerEntry = fileURLToPath(new URL('../functions/authorizer/handler.ts', import.meta.url));

/** The method ARN of a `POST /plants` request, as API Gateway passes it to the authorizer. */
export const benchMethodArn = 'arn:aws:execute-api:eu-west-1:123456789012:bench/bench/POST/plants';

/** A throwaway issuer: its own key pair and JWKS server, so the developer's keys are untouched. */
export interface AuthorizerFixture {
  /** The authorizer's environment variables for this issuer. */
  readonly environment: Readonly<Record<string, string>>;
  /** How often the JWKS was fetched so far. */
  readonly fetchCount: number;
  /** A valid token with the required scope. */
  signToken(subject: string): string;
  close(): Promise<void>;
}

/** Creates a key pair in a temporary folder and serves its JWKS on 127.0.0.1. */
export async function startAuthorizerFixture(): Promise<AuthorizerFixture> {
  const keysDirectory = mkdtempSync(join(tmpdir(), 'plant-store-bench-'));
  try {
    const keys = loadOrCreateLocalKeys(keysDirectory);
    const server = await startJwksServer(localJwks(keys));
    return {
      environment: localAuthorizerEnvironment(server.jwksUri),
      get fetchCount() {
        return server.fetchCount;
      },
      signToken: (subject) => signLocalToken(keys, { subject }),
      close: async () => {
        await server.close();
        rmSync(keysDirectory, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(keysDirectory, { recursive: true, force: true });
    throw error;
  }
}

/** Measures the authorizer; `durationMilliseconds` is the length of the verification run. */
export async function benchmarkAuthorizer({
  durationMilliseconds = 2000,
} = {}): Promise<AuthorizerFigures> {
  return {
    bundleBytes: await measureBundleBytes(),
    ...(await measureVerifications(durationMilliseconds)),
  };
}

async function measureBundleBytes(): Promise<number> {
  const result = await build({
    ...createBuildOptions(handlerEntry, 'authorizer.mjs'),
    absWorkingDir: fileURLToPath(new URL('..', import.meta.url)),
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles.reduce((total, file) => total + file.contents.byteLength, 0);
}

async function measureVerifications(durationMilliseconds: number) {
  const fixture = await startAuthorizerFixture();
  try {
    const handler = createHandler(readAuthorizerConfig(fixture.environment), {
      logger: createLogger({}, () => {}),
    });
    // Distinct tokens, signed beforehand: signing is the issuer's cost, not the authorizer's.
    const tokens = Array.from({ length: 64 }, (_, index) => fixture.signToken(`client-${index}`));
    const authorize = (token: string) =>
      handler({ type: 'TOKEN', methodArn: benchMethodArn, authorizationToken: `Bearer ${token}` });
    for (const token of tokens) await authorize(token); // warm-up; fetches the JWKS once

    let verifications = 0;
    const start = performance.now();
    while (performance.now() - start < durationMilliseconds) {
      const result = await authorize(tokens[verifications % tokens.length] ?? '');
      if (result.policyDocument.Statement[0]?.Effect !== 'Allow') {
        throw new Error('The benchmark token was not allowed.');
      }
      verifications += 1;
    }
    const elapsed = performance.now() - start;
    if (fixture.fetchCount !== 1) {
      throw new Error(`The JWKS was fetched ${fixture.fetchCount} times.`);
    }
    return {
      verificationsPerSecond: Math.round((verifications * 1000) / elapsed),
      verifications,
      durationMilliseconds: Math.round(elapsed),
    };
  } finally {
    await fixture.close();
  }
}

if (import.meta.main) {
  console.log(JSON.stringify(await benchmarkAuthorizer(), null, 2));
}
