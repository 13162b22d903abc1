/**
 * `@smithy/core/config` for the bundles: settings from Lambda's environment, else their defaults,
 * without the shared config files no function has (~4 KiB); the rest is the SDK's own.
 */
// @ts-expect-error: the SDK's own file, which `@smithy/core/config` types (its .d.ts sits apart).
export * from '../../node_modules/@smithy/core/dist-es/submodules/config/index.js';

type Selectors<Value> = {
  environmentVariableSelector(environment: NodeJS.ProcessEnv, options?: object): Value | undefined;
  default: Value | (() => Value | Promise<Value>);
};

/** The SDK's loader less the files, read once: a value the environment refuses counts as none. */
export function loadConfig<Value>(selectors: Selectors<Value>, options?: object) {
  const read = async () => {
    try {
      const value = selectors.environmentVariableSelector(process.env, options);
      if (value !== undefined) return value;
    } catch {}
    const fallback = selectors.default;
    return typeof fallback === 'function' ? (fallback as () => Promise<Value>)() : fallback;
  };
  let loaded: Promise<Value> | undefined;
  return () => {
    loaded ??= read();
    return loaded;
  };
}

/** The SDK's default mode; another (`AWS_DEFAULTS_MODE`, set by no function) is not bundled. */
export const resolveDefaultsModeConfig = () => async () => {
  if (process.env.AWS_DEFAULTS_MODE === undefined) return 'legacy';
  throw new Error('AWS_DEFAULTS_MODE is not bundled in the functions (infra/bundling.ts).');
};
