/**
 * Spans of a request's or a delivery's work, sent as OTLP/HTTP JSON to
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (else `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`) as each
 * invocation ends, when one is set and the trace is sampled; without one, a span is only its
 * context. No SDK and no layer: nothing to load at a cold start (docs/tracing.md).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createLogger } from './logger.ts';
import { lambdaSignedSettings, type SignedCall, send, signedCalls } from './signed-calls.ts';
import { childOf, type TraceContext } from './trace-context.ts';

const kinds = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;

type Attributes = Record<string, string | number | boolean>;

export interface SpanOptions {
  readonly kind?: keyof typeof kinds;
  /** The function whose work it is: a child's is its parent's. */
  readonly service?: string;
  /** Its own context, when its caller made it (a request's): else a child of the active span. */
  readonly context?: TraceContext;
  /** Spans it follows from without being their child: a fan-out's events. */
  readonly links?: readonly (TraceContext | undefined)[];
  readonly attributes?: Attributes;
}

/** A span's context, and what its work adds to it. */
export interface Span extends TraceContext {
  set(attributes: Attributes): void;
}

type Active = { readonly span: Span; readonly service: string; readonly kept: boolean };
type Spans = {
  active: AsyncLocalStorage<Active>;
  finished: { service: string; span: object }[];
  /** When a failed export was last said (a collector down, slow or misnamed), spans dropped since. */
  dropped: { saidAt: number; spans: number };
};
// One store, buffer and count a process, however many copies of this module hot reload imported.
const process_ = globalThis as { [key: symbol]: Spans | undefined };
const spans = Symbol.for('plant-store.spans');
const noneDropped = { saidAt: Number.NEGATIVE_INFINITY, spans: 0 };
process_[spans] ??= { active: new AsyncLocalStorage(), finished: [], dropped: noneDropped };
const { active, finished, dropped } = process_[spans];

/** An export's time limit: a slow collector costs a sampled invocation this much at most. */
export const exportTimeoutMilliseconds = 500;

export function activeSpan(): Span | undefined {
  return active.getStore()?.span;
}

/**
 * `work` as a span: its own `context`, else a child of the active span; with neither, no span.
 * Active for `work` (what it calls and logs is in its trace); kept when an endpoint is set and the
 * trace sampled (`sampled`), a child as its parent is; a throw is its error.
 */
export async function inSpan<T>(
  name: string,
  options: SpanOptions,
  work: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  const parent = active.getStore();
  const context = options.context ?? (parent && childOf(parent.span));
  if (context === undefined) return work(undefined);
  const attributes: Attributes = { ...options.attributes };
  const span: Span = { ...context, set: (more) => Object.assign(attributes, more) };
  const service = options.service ?? parent?.service ?? 'plant-store';
  const kept = parent && !options.context ? parent.kept : !!tracesEndpoint() && sampled(context);
  if (!kept) return active.run({ span, service, kept }, () => work(span));
  const [startedAt, started] = [Date.now(), performance.now()];
  let error: { code?: { statusCode?: number } } | undefined;
  try {
    return await active.run({ span, service, kept }, () => work(span));
  } catch (thrown) {
    error = (thrown ?? {}) as typeof error;
    throw thrown;
  } finally {
    // A server's error as answered. An error: a 5xx, a throw without one, a client's 4xx (OTel's).
    const answered = error === undefined ? 0 : (error.code?.statusCode ?? 500);
    if (answered && options.kind === 'server') attributes['http.response.status_code'] = answered;
    const status = Number(attributes['http.response.status_code'] ?? 0);
    const failed = answered >= 500 || status >= (options.kind === 'client' ? 400 : 500);
    const parentSpanId = options.context ? options.context.parentSpanId : parent?.span.spanId;
    finished.push({
      service,
      span: {
        traceId: context.traceId,
        spanId: context.spanId,
        parentSpanId,
        name,
        kind: kinds[options.kind ?? 'internal'],
        startTimeUnixNano: nanoseconds(startedAt),
        endTimeUnixNano: nanoseconds(startedAt + performance.now() - started),
        attributes: Object.entries(attributes).map(([key, value]) => ({ key, value: otlp(value) })),
        links: options.links?.filter((link) => link !== undefined).map(({ flags, ...ids }) => ids),
        ...(failed ? { status: { code: 2, message: String(error ?? `HTTP ${status}`) } } : {}),
      },
    });
  }
}

/** Sends the spans finished so far in one request, as an invocation ends (Lambda then freezes). */
export async function flushSpans(timeLeftMilliseconds = Number.POSITIVE_INFINITY): Promise<void> {
  const url = finished.length === 0 ? undefined : tracesEndpoint();
  const timeout = Math.min(exportTimeoutMilliseconds, timeLeftMilliseconds);
  if (url === undefined || !(timeout > 0)) return;
  const spans = finished.splice(0);
  try {
    const services = Map.groupBy(spans, (entry) => entry.service);
    const resourceSpans = [...services].map(([service, entries]) => ({
      resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
      scopeSpans: [{ scope: { name: 'plant-store' }, spans: entries.map((entry) => entry.span) }],
    }));
    const body = JSON.stringify({ resourceSpans });
    const target = new URL(url);
    // X-Ray's OTLP endpoint takes calls signed for xray:PutSpans (an emulator's: AWS_ENDPOINT_URL).
    const { status } = await (/^xray\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$/.test(target.host)
      ? signedCalls('xray', {
          ...lambdaSignedSettings(process.env.AWS_ENDPOINT_URL?.trim() || target.origin),
          timeoutMilliseconds: timeout,
        })('POST', target.pathname, { body: { resourceSpans } })
      : send(target, 'POST', { 'content-type': 'application/json' }, body, timeout));
    // Refused (X-Ray's 403 without `xray:PutSpans`, say): as dropped.
    if (status >= 300) throw new Error(`answered HTTP ${status}`);
  } catch (error) {
    // Dropped: said once a minute, the URL without credentials; never fails work nor floods logs.
    dropped.spans += spans.length;
    if (Date.now() - dropped.saidAt < 60_000) return;
    const said = url.replace(/^([a-z][a-z\d+.-]*:\/\/)?[^/@]*@/i, '$1').replace(/[?#].*/, '');
    createLogger({ url: said }).warn('spans not exported', { spans: dropped.spans, error });
    Object.assign(dropped, { saidAt: Date.now(), spans: 0 });
  }
}

/** What a client's calls are made of, as its middleware sees them. */
export type AwsCallArgs = { input: Record<string, unknown> };

/**
 * Each call of an AWS SDK client as a client span below the active one when kept, if an endpoint
 * is set as the client is made (a middleware costs every call); `traced` may add it to a call.
 */
export function traceAwsCalls(
  client: { middlewareStack: { add(middleware: never, options: object): void } },
  system: string,
  traced: (args: AwsCallArgs, operation: string, span: Span) => AwsCallArgs = (args) => args,
): void {
  if (tracesEndpoint() === undefined) return;
  const middleware =
    (next: (args: AwsCallArgs) => Promise<unknown>, { commandName }: { commandName: string }) =>
    (args: AwsCallArgs) => {
      if (!active.getStore()?.kept) return next(args);
      const operation = commandName.replace(/Command$/, '');
      const attributes = { 'rpc.system': 'aws-api', 'rpc.service': system };
      return inSpan(`${system}.${operation}`, { kind: 'client', attributes }, (span) =>
        next(span === undefined ? args : traced(args, operation, span)),
      );
    };
  client.middlewareStack.add(middleware as never, { step: 'initialize', name: 'spans' });
}

/** Calls signed without an SDK client (the authorizer's), each a client span as an SDK call's. */
export function traceSignedCalls(system: string, call: SignedCall): SignedCall {
  if (tracesEndpoint() === undefined) return call;
  const attributes = { 'rpc.system': 'aws-api', 'rpc.service': system };
  return (method, path, options) => {
    if (!active.getStore()?.kept) return call(method, path, options);
    const target = options?.headers?.['x-amz-target']?.split('.')[1];
    const name = `${system}.${target ?? `${method} /${path.split('/')[1]}`}`;
    return inSpan(name, { kind: 'client', attributes }, async (span) => {
      const answer = await call(method, path, options);
      span?.set({ 'http.response.status_code': answer.status });
      return answer;
    });
  };
}

/** The endpoint set, blank counting as none. */
export function tracesEndpoint(): string | undefined {
  const traces = process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = process.env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  return traces || (base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined);
}

/** The trace's flag, and `OTEL_TRACES_SAMPLER_ARG`'s share of trace ids (their last 32 bits). */
function sampled({ traceId, flags }: TraceContext): boolean {
  const ratio = Number(process.env.OTEL_TRACES_SAMPLER_ARG?.trim() || 1);
  const share = (Number.isFinite(ratio) ? ratio : 1) * 2 ** 32;
  return (Number.parseInt(flags, 16) & 1) === 1 && Number.parseInt(traceId.slice(-8), 16) < share;
}

/** An attribute's OTLP/JSON value: an int64 as its decimal string, as protobuf's JSON has it. */
function otlp(value: string | number | boolean): object {
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  return Number.isSafeInteger(value) ? { intValue: String(value) } : { doubleValue: value };
}

/** Wall-clock milliseconds as OTLP's nanoseconds since the epoch. */
function nanoseconds(milliseconds: number): string {
  return String(BigInt(Math.round(milliseconds * 1_000)) * 1_000n);
}
