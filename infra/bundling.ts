/** The esbuild options of every bundle, deployed and benched alike. Plain data. */
import type { BuildOptions } from 'esbuild';

/** ESM bundles of CommonJS dependencies that call `require`: the bundle defines one. */
export const createRequireBanner =
  "import { createRequire as plantStoreCreateRequire } from 'node:module';" +
  'const require = plantStoreCreateRequire(import.meta.url);';

export const bundleSettings = {
  format: 'esm',
  // Smaller bundles parse faster; source maps would cost start-up time.
  minify: true,
  sourcemap: false,
  target: 'node24',
  platform: 'node',
  mainFields: ['module', 'main'],
  // The SDK is bundled, pinned and tree-shaken, not taken from the runtime.
  external: [],
  banner: { js: createRequireBanner },
  // Modules swapped for leaner ones in the bundles only; each file says why.
  alias: {
    '@aws-sdk/credential-provider-node': './infra/bundle-aliases/lambda-credentials.ts',
    '@aws/lambda-invoke-store': './infra/bundle-aliases/lambda-invoke-store.ts',
    '@aws-sdk/middleware-endpoint-discovery': './infra/bundle-aliases/no-endpoint-discovery.ts',
    '@smithy/core/checksum': './infra/bundle-aliases/node-checksum.ts',
    '@smithy/core/config': './infra/bundle-aliases/lambda-config.ts',
    '@smithy/core/event-streams': './infra/bundle-aliases/no-event-streams.ts',
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
