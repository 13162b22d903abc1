/**
 * Spans of a request's or a delivery's work, sent as OTLP/HTTP JSON to
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (else `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`) at the
 * end of each invocation, when one is set and the trace is sampled; without one, a span is only
 * its context. No SDK and no layer: nothing to load at a cold start (docs/tracing.md).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { lambdaSignedSettings, signedCalls } from './signed-calls.ts';
import { childOf, formatTraceparent, type TraceContext } from './trace-context.ts';

/** OTLP's span kinds. */
export const spanKinds = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;

type Attributes = Record<string, string | number | boolean>;

export interface SpanOptions {
  readonly kind?: keyof typeof spanKinds;
  /** The function whose work it is; a child's, its parent's. */
  readonly service?: string;
  /** The span's own context when its caller made it (a request's, an attempt's): else a child. */
  readonly context?: TraceContext;
  /** With `context`: its parent's span id, when it has one (a client's `traceparent`'s). */
  readonly parentSpanId?: string;
  /** Spans it follows from without being their child: a fan-out's events. */
  readonly links?: readonly (TraceContext | undefined)[];
  readonly attributes?: Attributes;
}

/** The span a piece of work runs in, and what it adds to it. */
export interface Span extends TraceContext {
  set(attributes: Attributes): void;
}

const active = new AsyncLocalStorage<{ readonly span: Span; readonly service: string }>();
const finished: { service: string; span: object }[] = [];

/** The span of the work running now, if any. */
export function activeSpan(): Span | undefined {
  return active.getStore()?.span;
}

/**
 * `work` as a span: its own `context`, else a child of the active span; with neither, no span.
 * Recorded when an endpoint is set and the trace sampled (its flag, and
 * `OTEL_TRACES_SAMPLER_ARG`'s share of trace ids); a throw is its error.
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
  const start = nanoseconds();
  let error: unknown;
  try {
    return await active.run({ span, service }, () => work(span));
  } catch (thrown) {
    error = thrown;
    throw thrown;
  } finally {
    if (tracesEndpoint() !== undefined && sampled(context)) {
      const parentSpanId =
        options.context === undefined ? parent?.span.spanId : options.parentSpanId;
      finished.push({
        service,
        span: {
          traceId: context.traceId,
          spanId: context.spanId,
          ...(parentSpanId === undefined ? {} : { parentSpanId }),
          name,
          kind: spanKinds[options.kind ?? 'internal'],
          startTimeUnixNano: start,
          endTimeUnixNano: nanoseconds(),
          attributes: Object.entries(attributes).map(([key, value]) => ({
            key,
            value: otlpValue(value),
          })),
          links: (options.links ?? [])
            .filter((link) => link !== undefined)
            .map(({ traceId, spanId }) => ({ traceId, spanId })),
          status: error === undefined ? { code: 1 } : { code: 2, message: String(error) },
        },
      });
    }
  }
}

/**
 * Sends the spans finished so far, one request a function: called as an invocation ends, since
 * Lambda freezes the container after. A failure is dropped: tracing never fails the work.
 */
export async function flushSpans(): Promise<void> {
  const url = tracesEndpoint();
  if (url === undefined || finished.length === 0) return;
  const services = Map.groupBy(finished.splice(0), (entry) => entry.service);
  const resourceSpans = [...services].map(([service, entries]) => ({
    resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
    scopeSpans: [{ scope: { name: 'plant-store' }, spans: entries.map((entry) => entry.span) }],
  }));
  const { host, origin, pathname } = new URL(url);
  // X-Ray's OTLP endpoint takes requests signed for `xray:PutSpans`; an emulator, unsigned or not,
  // answers at `AWS_ENDPOINT_URL` as every AWS call here does.
  const sent = /^xray\.[a-z0-9-]+\.amazonaws\.com$/.test(host)
    ? signedCalls('xray', {
        ...lambdaSignedSettings(process.env.AWS_ENDPOINT_URL || origin),
        timeoutMilliseconds: exportTimeoutMilliseconds,
      })('POST', pathname, { body: { resourceSpans } })
    : fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ resourceSpans }),
        signal: AbortSignal.timeout(exportTimeoutMilliseconds),
      }).then((answer) => answer.body?.cancel());
  await sent.catch(() => undefined);
}

/** An export's time limit: a slow collector costs a sampled invocation this much at most. */
export const exportTimeoutMilliseconds = 500;

/**
 * Every call of an AWS SDK client as a client span below the active one (none outside a span);
 * an SQS message sent carries the span's `traceparent` in its attributes.
 */
export function traceAwsCalls(
  client: { middlewareStack: { add(middleware: never, options: object): void } },
  system: string,
): void {
  type Next = (args: { input: Record<string, unknown> }) => Promise<unknown>;
  const middleware =
    (next: Next, { commandName }: { commandName: string }) =>
    (args: { input: Record<string, unknown> }) =>
      inSpan(
        `${system}.${commandName.replace(/Command$/, '')}`,
        { kind: 'client', attributes: { 'rpc.system': 'aws-api', 'rpc.service': system } },
        (span) => {
          const entries = args.input.Entries ?? (args.input.MessageBody ? [args.input] : []);
          if (span !== undefined && system === 'SQS') {
            const traceparent = { DataType: 'String', StringValue: formatTraceparent(span) };
            for (const entry of entries as { MessageAttributes?: object }[]) {
              entry.MessageAttributes = { ...entry.MessageAttributes, traceparent };
            }
          }
          return next(args);
        },
      );
  client.middlewareStack.add(middleware as never, { step: 'initialize', name: 'spans' });
}

function tracesEndpoint(): string | undefined {
  const { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: traces, OTEL_EXPORTER_OTLP_ENDPOINT: base } =
    process.env;
  if (traces) return traces;
  return base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined;
}

/** The trace's flag, and a stable share of trace ids: every function of a trace decides alike. */
function sampled({ traceId, flags }: TraceContext): boolean {
  const ratio = Number(process.env.OTEL_TRACES_SAMPLER_ARG ?? 1);
  return (
    (Number.parseInt(flags, 16) & 1) === 1 &&
    Number.parseInt(traceId.slice(-8), 16) < ratio * 2 ** 32
  );
}

function nanoseconds(): string {
  return String(BigInt(Math.round((performance.timeOrigin + performance.now()) * 1_000)) * 1_000n);
}

function otlpValue(value: string | number | boolean): object {
  if (typeof value === 'boolean') return { boolValue: value };
  return typeof value === 'number' ? { intValue: value } : { stringValue: value };
}
