/**
 * `@aws/lambda-invoke-store` for the bundles: the SDK only reads the runtime's store (trace ids),
 * and the package's runtime-side parts are 2.2 KiB of every bundle. This reads the runtime's
 * store, or none (then `_X_AMZN_TRACE_ID`, as with the package's empty one).
 */

/** What the SDK reads of the store. */
interface TraceContext {
  getXRayTraceId(): string | undefined;
  getTraceparent?(): string | undefined;
  getTracestate?(): string | undefined;
}

export const InvokeStore = {
  /** The runtime's store of the current invocation, when the runtime keeps one. */
  async getInstanceAsync(): Promise<TraceContext | undefined> {
    return (globalThis as { awslambda?: { InvokeStore?: TraceContext } }).awslambda?.InvokeStore;
  },
};
