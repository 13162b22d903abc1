/**
 * The bundles the benchmark measures: each function as the CDK app deploys it (the options of
 * `infra/bundling.ts`), as the CDK would build it with its defaults, and the steps in between,
 * so that every bundling lever is measured on its own.
 */
import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type BuildOptions, build, type Plugin } from 'esbuild';
import {
  functionDisplayName,
  type RouteFunctionName,
  routeFunctionOf,
  routes,
} from '../functions/shared/http/routes.ts';
import { bundleSettings, createBuildOptions } from '../infra/bundling.ts';
import { functionSettings } from '../infra/function-settings.ts';
import { isEndpointRoute } from '../infra/throttling.ts';

/** The repository root: esbuild's working directory, as in the CDK's local bundling. */
export const repositoryRoot = resolve(import.meta.dirname, '..');

/** A bundle on disk. */
export interface Bundle {
  readonly name: string;
  readonly path: string;
  readonly bytes: number;
}

/**
 * How `NodejsFunction` bundles by default for a Node.js 18+ runtime: CommonJS, not minified,
 * `@aws-sdk/*` left out for the runtime's own copy (here: loaded from `node_modules`).
 */
const cdkDefaultOptions = {
  format: 'cjs',
  minify: false,
  platform: 'node',
  target: 'node24',
  external: ['@aws-sdk/*'],
} as const satisfies BuildOptions;

/**
 * The levers, cumulative from the CDK default towards the deployed bundle (which adds the
 * aliases of `infra/bundling.ts`); then `esm-minified` as CommonJS, to show what the module format
 * itself is worth, and the deployed bundle without its trace context, to show what tracing costs.
 */
const sdkBundled: BuildOptions = { ...cdkDefaultOptions, external: [] };
const esmModuleFirst: BuildOptions = {
  ...sdkBundled,
  format: 'esm',
  mainFields: [...bundleSettings.mainFields],
  banner: bundleSettings.banner,
};
const esmMinified: BuildOptions = { ...esmModuleFirst, minify: true };

/**
 * The deployed build with the trace context and the spans stubbed (`untraced-trace-context.ts`,
 * `untraced-spans.ts`): what tracing costs is the difference.
 */
const untraced: Plugin = {
  name: 'untraced',
  setup(build) {
    build.onResolve({ filter: /\/(trace-context|spans)\.ts$/ }, ({ path }) => ({
      path: join(
        repositoryRoot,
        'bench',
        `untraced-${path.endsWith('spans.ts') ? 'spans' : 'trace-context'}.ts`,
      ),
    }));
  },
};

const createVariants: readonly { name: string; options: BuildOptions }[] = [
  { name: 'cdk-default', options: cdkDefaultOptions },
  { name: 'cjs-sdk-bundled', options: sdkBundled },
  { name: 'esm-module-first', options: esmModuleFirst },
  { name: 'esm-minified', options: esmMinified },
  { name: 'cjs-minified', options: { ...esmMinified, format: 'cjs', banner: {} } },
  { name: 'deployed-untraced', options: { ...deployedOptions(), plugins: [untraced] } },
];

function deployedOptions(): BuildOptions {
  const { entryPoints: _entry, outfile: _outfile, ...options } = createBuildOptions('', '');
  return options;
}

/**
 * The function whose every bundling lever the benchmark takes apart: the one behind
 * `POST /plants`, whose sample event is `events/<its name>.json`.
 */
export const createFunction = routeFunctionOf('POST', '/plants');
export const createFunctionName = functionDisplayName(createFunction);

/** Every bundle the benchmark runs, written under `directory`. */
export interface BenchBundles {
  /** The create function exactly as deployed. */
  readonly create: Bundle;
  /** The create function built the other ways (see `createVariants`), by name. */
  readonly createVariants: readonly Bundle[];
  /** The bare handler (body parsing and the same DocumentClient), built as deployed. */
  readonly bareCreate: Bundle;
  readonly authorizer: Bundle;
  readonly authorizerCdkDefault: Bundle;
  /** The other API functions, each as deployed and as the CDK would build it by default. */
  readonly otherApiFunctions: readonly {
    readonly name: RouteFunctionName;
    readonly deployed: Bundle;
    readonly cdkDefault: Bundle;
  }[];
}

/**
 * The plants API's functions besides the create function. The webhook endpoint functions are not
 * on a plant's path, and their sample events need the endpoints' records and KMS, which the
 * instant store does not imitate: their bundles are checked by the tests, their cold starts are
 * not measured here.
 */
export const otherApiFunctions = [
  ...new Set(
    routes
      .filter((route) => !isEndpointRoute(route))
      .map((route) => route.function)
      .filter((name) => name !== createFunction),
  ),
];

/** Builds every bundle into `directory` (created by esbuild when missing). */
export async function buildBenchBundles(directory: string): Promise<BenchBundles> {
  const createEntry = functionSettings[createFunction].entry;
  const authorizerEntry = functionSettings.authorizer.entry;
  const bundle = (name: string, entry: string, options: BuildOptions) =>
    buildBundle(directory, name, entry, options);
  return {
    create: await bundle(createFunctionName, createEntry, deployedOptions()),
    createVariants: await Promise.all(
      createVariants.map(({ name, options }) => bundle(name, createEntry, options)),
    ),
    bareCreate: await bundle('bare-create', 'bench/bare-create-handler.ts', deployedOptions()),
    authorizer: await bundle('authorizer', authorizerEntry, deployedOptions()),
    authorizerCdkDefault: await bundle(
      'authorizer-cdk-default',
      authorizerEntry,
      cdkDefaultOptions,
    ),
    otherApiFunctions: await Promise.all(
      otherApiFunctions.map(async (name) => {
        const { entry } = functionSettings[name];
        return {
          name,
          deployed: await bundle(name, entry, deployedOptions()),
          cdkDefault: await bundle(`${name}-cdk-default`, entry, cdkDefaultOptions),
        };
      }),
    ),
  };
}

async function buildBundle(
  directory: string,
  name: string,
  entry: string,
  options: BuildOptions,
): Promise<Bundle> {
  // `.cjs`/`.mjs`: the repository's package.json says "type": "module", and the bundles sit
  // inside it so that the CDK-default build finds the SDK in node_modules.
  const path = join(directory, name, options.format === 'cjs' ? 'index.cjs' : 'index.mjs');
  await build({
    ...options,
    bundle: true,
    entryPoints: [join(repositoryRoot, entry)],
    outfile: path,
    absWorkingDir: repositoryRoot,
    logLevel: 'error',
  });
  return { name, path, bytes: statSync(path).size };
}
