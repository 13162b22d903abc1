/**
 * API Gateway's X-Ray trace, imitated: with tracing on, a stage gives each request a trace header
 * (`Root=1-<8 hex>-<24 hex>;Parent=<16 hex>;Sampled=1`) that its authorizer's and its function's
 * invocations both run under ("Tracing user requests to REST APIs using X-Ray", API Gateway
 * developer guide). Lambda's Node.js runtime serves it per invocation from
 * `awslambda.InvokeStore`; `npm start` runs every function in one process, so it serves it the
 * same way, per request.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';

const requests = new AsyncLocalStorage<string>();
const served = Symbol('served by npm start');

/** Runs `answer` under a new X-Ray trace header, as API Gateway runs a request's invocations. */
export function withXRayTrace<Result>(answer: () => Promise<Result>): Promise<Result> {
  const seconds = Math.floor(Date.now() / 1000)
    .toString(16)
    .padStart(8, '0');
  const root = `1-${seconds}-${randomBytes(12).toString('hex')}`;
  return requests.run(`Root=${root};Parent=${randomBytes(8).toString('hex')};Sampled=1`, answer);
}

type XRayTraceStore = { getXRayTraceId?(): string | undefined; [served]?: true };

/**
 * Serves the header from the runtime's store: the one the AWS SDK makes outside Lambda (it answers
 * none), or one of its own shape. Once for the process, before any request.
 */
export function serveXRayTraces(): void {
  const runtime = globalThis as { awslambda?: { InvokeStore?: XRayTraceStore } };
  runtime.awslambda ??= {};
  runtime.awslambda.InvokeStore ??= {};
  const store = runtime.awslambda.InvokeStore;
  if (store[served]) return;
  const runtimeOwn = store.getXRayTraceId?.bind(store);
  store.getXRayTraceId = () => requests.getStore() ?? runtimeOwn?.();
  store[served] = true;
}
