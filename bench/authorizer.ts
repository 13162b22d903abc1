/**
 * What the authorizer costs: its bundle size (paid at each cold start) and how many tokens one
 * Node.js thread verifies per second once the JWKS is cached (paid at each uncached request).
 * `node bench/authorizer.ts` prints the figures as JSON.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { createHandler, readAuthorizerConfig } from '../functions/authorizer/handler.ts';
import { createLogger } from '../functions/shared/logger.ts';
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
const methodArn = 'arn:aws:execute-api:eu-west-1:123456789012:bench/bench/POST/plants';

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
    entryPoints: [handlerEntry],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    mainFields: ['module', 'main'],
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles.reduce((total, file) => total + file.contents.byteLength, 0);
}

async function measureVerifications(durationMilliseconds: number) {
  // A throwaway key pair: the benchmark must not depend on, or create, the developer's keys.
  const keysDirectory = mkdtempSync(join(tmpdir(), 'plant-store-bench-'));
  const keys = loadOrCreateLocalKeys(keysDirectory);
  const server = await startJwksServer(localJwks(keys));
  try {
    const handler = createHandler(
      readAuthorizerConfig(localAuthorizerEnvironment(server.jwksUri)),
      { logger: createLogger({}, () => {}) },
    );
    // Distinct tokens, signed beforehand: signing is the issuer's cost, not the authorizer's.
    const tokens = Array.from({ length: 64 }, (_, index) =>
      signLocalToken(keys, { subject: `client-${index}` }),
    );
    const authorize = (token: string) =>
      handler({ type: 'TOKEN', methodArn, authorizationToken: `Bearer ${token}` });
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
    if (server.fetchCount !== 1)
      throw new Error(`The JWKS was fetched ${server.fetchCount} times.`);
    return {
      verificationsPerSecond: Math.round((verifications * 1000) / elapsed),
      verifications,
      durationMilliseconds: Math.round(elapsed),
    };
  } finally {
    await server.close();
    rmSync(keysDirectory, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  console.log(JSON.stringify(await benchmarkAuthorizer(), null, 2));
}
