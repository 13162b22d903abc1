/**
 * `node:process` for the Lambda bundles: the global `process`, which is what the module exports
 * (see `bundleSettings.alias`).
 *
 * An ES module import of a Node.js built-in goes through an ESM facade that reads every export;
 * `process`'s include lazy getters (`report`, `finalization`…) that load modules of their own,
 * paid at every cold start (docs/performance.md). The SDK's user agent imports
 * `env` and `versions` from it; a name not exported here fails the build.
 */
export const { env, versions } = process;
export default process;
