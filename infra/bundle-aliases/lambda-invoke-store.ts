/**
 * `@aws/lambda-invoke-store` for the Lambda bundles (see `bundleSettings.alias`).
 *
 * The SDK's recursion-detection middleware reads the current invocation's trace ids from the
 * store the Lambda runtime keeps on `globalThis.awslambda.InvokeStore`, and never writes it. The
 * package also carries what only the runtime needs (making the store, its AsyncLocalStorage
 * variant, the protected keys): 2.2 KiB of every bundle. This reads the runtime's store, or
 * none; without one the middleware takes the trace id from `_X_AMZN_TRACE_ID`, as it does with
 * the fresh, empty store the package would make. Running the sources keeps the package.
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
