/**
 * `node:process` for the bundles: the global `process`, without the ESM facade that reads lazy
 * getters at each cold start (docs/performance.md). A name not exported here fails the build.
 */
export const { env, versions } = process;
export default process;
