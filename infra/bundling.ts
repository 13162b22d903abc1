/**
 * How the Lambda bundles are built: one set of esbuild options used by the CDK stack
 * (`PlantStoreFunction`) and by the benchmark, so what is measured is what is deployed.
 *
 * Plain data (no aws-cdk-lib) so that scripts can import it cheaply.
 */
import type { BuildOptions } from 'esbuild';

/**
 * ESM bundles still contain CommonJS dependencies (parts of the AWS SDK) that call `require`;
 * an ES module has none, so the bundle defines one. The alias keeps it clear of bundled names.
 */
export const createRequireBanner =
  "import { createRequire as plantStoreCreateRequire } from 'node:module';" +
  'const require = plantStoreCreateRequire(import.meta.url);';

/** The esbuild settings every Plant Store function is bundled with. */
export const bundleSettings = {
  format: 'esm',
  // Smaller bundles parse faster on a cold start; stack traces stay readable enough without
  // source maps, which would cost start-up time (`--enable-source-maps` is deliberately off).
  minify: true,
  sourcemap: false,
  // The Lambda runtime's Node.js major (nodejs24.x).
  target: 'node24',
  platform: 'node',
  // Prefer the ES module builds of dependencies: esbuild tree-shakes them far better.
  mainFields: ['module', 'main'],
  // The AWS SDK is bundled, not taken from the runtime: a pinned, tested version, tree-shaken
  // to the clients used, and faster to load than the runtime's full copy.
  external: [],
  banner: { js: createRequireBanner },
  // Modules swapped for leaner ones in the bundles only; paths are relative to the repository
  // root (esbuild's working directory). Each file says why, with its measured effect.
  alias: {
    '@aws-sdk/credential-provider-node': './infra/bundle-aliases/lambda-credentials.ts',
    '@aws/lambda-invoke-store': './infra/bundle-aliases/lambda-invoke-store.ts',
    '@smithy/core/event-streams': './infra/bundle-aliases/no-event-streams.ts',
    'mnemonist/lru-cache': './infra/bundle-aliases/lru-cache.ts',
    http: './infra/bundle-aliases/node-http.ts',
    'node:http': './infra/bundle-aliases/node-http.ts',
    process: './infra/bundle-aliases/node-process.ts',
    'node:process': './infra/bundle-aliases/node-process.ts',
  },
} as const satisfies BuildOptions;

/** Complete esbuild options for bundling one function entry into `outfile` (for scripts). */
export function createBuildOptions(entryPoint: string, outfile: string): BuildOptions {
  return {
    ...bundleSettings,
    mainFields: [...bundleSettings.mainFields],
    external: [...bundleSettings.external],
    alias: { ...bundleSettings.alias },
    bundle: true,
    entryPoints: [entryPoint],
    outfile,
  };
}
