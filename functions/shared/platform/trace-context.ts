/**
 * W3C Trace Context: a request's `traceparent` honoured or a trace begun, named on every log line
 * and answer (`traceresponse`), and carried to the webhooks its change makes (docs/tracing.md).
 */
import { randomFillSync } from 'node:crypto';

/** One span's place in a trace: the ids and flags a `traceparent` carries. */
export interface TraceContext {
  /** 32 lower-case hex digits, not all zeros. */
  readonly traceId: string;
  /** 16 lower-case hex digits, not all zeros. */
  readonly spanId: string;
  /** Two hex digits; `01` is sampled. */
  readonly flags: string;
  /** A span's parent, when it has one (its `childOf`). */
  readonly parentSpanId?: string;
}

const traceparentPattern = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const allZeros = /^0+$/;

/** A `traceparent`'s context if valid (§3.2: no version ff or zero id; a 00 ends at its flags). */
export function parseTraceparent(value: string | undefined): TraceContext | undefined {
  const match = value === undefined ? null : traceparentPattern.exec(value.trim());
  const [, version, traceId = '', spanId = '', flags = '', rest] = match ?? [];
  if (!version || version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (allZeros.test(traceId) || allZeros.test(spanId)) return undefined;
  // Only the sampled flag is passed on: level 1 leaves the others reserved, to be sent as zeros.
  return { traceId, spanId, flags: Number.parseInt(flags, 16) & 1 ? '01' : '00' };
}

/** The context as a `traceparent` (and `traceresponse`) header's value, version `00`. */
export function formatTraceparent(context: TraceContext): string {
  return `00-${context.traceId}-${context.spanId}-${context.flags}`;
}

/** A new span id: 8 random bytes, never all zeros. */
export function newSpanId(): string {
  const id = randomHex(8);
  return allZeros.test(id) ? newSpanId() : id;
}

// Ids are cut from 4 KiB of random bytes drawn at once, as `randomUUID` does (a draw: ~2 µs).
const pool = Buffer.alloc(4096);
let drawn = pool.length;

function randomHex(bytes: number): string {
  if (drawn + bytes > pool.length) {
    randomFillSync(pool);
    drawn = 0;
  }
  drawn += bytes;
  return pool.toString('hex', drawn - bytes, drawn);
}

/** A span of `parent`'s trace below it (a webhook attempt below its event's request). */
export function childOf({ traceId, spanId, flags }: TraceContext): TraceContext {
  return { traceId, spanId: newSpanId(), flags, parentSpanId: spanId };
}

/**
 * The span of a request: below the client's `traceparent` when it sent a valid one, else the
 * start of a trace, whose id is the X-Ray trace's when Lambda runs under one (its root
 * `1-<8 hex>-<24 hex>` is the same 128 bits), so that the X-Ray console finds it.
 */
export function requestTrace(
  traceparent: string | undefined,
  xrayTraceHeader: string | undefined = xrayHeader(),
): TraceContext {
  const parent = parseTraceparent(traceparent);
  if (parent !== undefined) return childOf(parent);
  const xray = traceIdOfXRay(xrayTraceHeader);
  const sampled = xray === undefined || /Sampled=1/.test(xrayTraceHeader ?? '');
  const traceId = xray ?? randomHex(16);
  return { traceId, spanId: newSpanId(), flags: sampled ? '01' : '00' };
}

/**
 * The invocation's X-Ray trace header: from the Node.js runtime's per-invocation store
 * (`@aws/lambda-invoke-store`, which `npm start`'s gateway imitates), else `_X_AMZN_TRACE_ID`.
 */
export function xrayHeader(): string | undefined {
  const { awslambda } = globalThis as {
    awslambda?: { InvokeStore?: { getXRayTraceId?(): string | undefined } };
  };
  return awslambda?.InvokeStore?.getXRayTraceId?.() ?? process.env._X_AMZN_TRACE_ID;
}

/** The W3C trace id of an X-Ray trace header's root (`Root=1-<8 hex>-<24 hex>`), if it has one. */
export function traceIdOfXRay(header: string | undefined): string | undefined {
  const root = /Root=1-([0-9a-f]{8})-([0-9a-f]{24})/.exec(header ?? '');
  return root === null ? undefined : `${root[1]}${root[2]}`;
}
