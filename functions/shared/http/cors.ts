/**
 * Cross-origin requests from browsers (CORS): the allowed origins and the headers answers carry,
 * for the functions, the stack's preflights and gateway responses, and `npm start`.
 */
import { commaList, parsed } from '../platform/configuration.ts';

/** What a browser may send and read, the same on every route. */
export const corsSettings = {
  /** Request headers a page may set (besides the ones the Fetch standard always allows). */
  allowedHeaders: [
    'Authorization',
    'Content-Type',
    'Idempotency-Key',
    'If-Match',
    'If-None-Match',
    'traceparent',
    'tracestate',
  ],
  /** Response headers a page may read (besides the CORS-safelisted ones). */
  exposedHeaders: [
    'ETag',
    'Idempotent-Replayed',
    'Link',
    'Retry-After',
    'traceresponse',
    'WWW-Authenticate',
    'x-amzn-RequestId',
  ],
  /** Chromium keeps a preflight 2 hours at most. */
  maxAgeSeconds: 7200,
} as const;

/** An exact origin, `*`, or for `npm start` only a host with any port (`http://localhost:*`). */
const originPattern = /^https?:\/\/[a-z0-9.-]+(:([0-9]{1,5}|\*))?$/;

/** Checks a list of allowed origins; throws naming the first that is not one. */
export function checkAllowedOrigins(
  origins: readonly string[],
  options: { readonly anyOrigin: boolean; readonly anyPort: boolean },
): readonly string[] {
  for (const origin of origins) {
    if (origin === '*') {
      if (!options.anyOrigin) throw new Error('"*" (any origin) is not allowed here');
      continue;
    }
    if (!originPattern.test(origin) || (origin.endsWith(':*') && !options.anyPort)) {
      throw new Error(
        `"${origin}" is not an origin (scheme://host or scheme://host:port, lower case, no path)`,
      );
    }
  }
  return origins;
}

/** Whether a request's `Origin` is one the list allows. */
export function isOriginAllowed(origin: string, allowed: readonly string[]): boolean {
  return allowed.some((rule) => {
    if (rule === '*') return true;
    // No origin a browser sends holds `*`: the pattern itself is not an origin.
    if (origin.includes('*')) return false;
    if (rule === origin) return true;
    if (!rule.endsWith(':*')) return false;
    // Any port, the scheme's default too (a browser leaves it out of `Origin`).
    const host = rule.slice(0, -2);
    if (origin === host) return true;
    const port = origin.startsWith(`${host}:`) ? origin.slice(host.length + 1) : '';
    return /^[1-9][0-9]{0,4}$/.test(port) && Number(port) <= 65535;
  });
}

const exposed = {
  'Access-Control-Expose-Headers': corsSettings.exposedHeaders.join(', '),
  Vary: 'Origin',
} as const;

/** An answer's CORS headers: `Vary: Origin` wherever origins are allowed, the rest for those. */
export function corsHeaders(
  origin: string | undefined,
  allowed: readonly string[],
): Record<string, string> {
  if (allowed.length === 0) return {};
  const allowOrigin = allowOriginHeader(origin, allowed);
  if (allowOrigin === undefined) return { Vary: 'Origin' };
  return { ...allowOrigin, ...exposed };
}

/** `Access-Control-Allow-Origin` for `origin`: `*`, the origin itself, or none. */
export function allowOriginHeader(
  origin: string | undefined,
  allowed: readonly string[],
): { readonly 'Access-Control-Allow-Origin': string } | undefined {
  if (origin === undefined || !isOriginAllowed(origin, allowed)) return undefined;
  return { 'Access-Control-Allow-Origin': allowed.includes('*') ? '*' : origin };
}

/** A preflight's answer, but for `Access-Control-Allow-Origin` (set for an allowed origin only). */
export function preflightHeaders(methods: readonly string[]): Record<string, string> {
  return {
    'Access-Control-Allow-Methods': [...methods, 'OPTIONS'].join(', '),
    'Access-Control-Allow-Headers': corsSettings.allowedHeaders.join(', '),
    'Access-Control-Max-Age': String(corsSettings.maxAgeSeconds),
    Vary: 'Origin',
  };
}

/** The gateway's own answers' CORS: literals, and whether `Origin` is echoed. */
export function gatewayResponseCors(allowed: readonly string[]): {
  readonly literals: Readonly<Record<string, string>>;
  readonly echoOrigin: boolean;
} {
  const allowOrigin = gatewayAllowOrigin(allowed);
  if (allowOrigin === undefined) return { literals: {}, echoOrigin: false };
  if (allowOrigin === 'request-origin') return { literals: exposed, echoOrigin: true };
  const literals = { ...exposed, 'Access-Control-Allow-Origin': allowOrigin.literal };
  return { literals, echoOrigin: false };
}

/**
 * The gateway's own answers' `Access-Control-Allow-Origin`: its headers cannot be conditional,
 * so several origins echo `Origin` (an error body holds no data).
 */
export function gatewayAllowOrigin(
  allowed: readonly string[],
): { readonly literal: string } | 'request-origin' | undefined {
  if (allowed.length === 0) return undefined;
  if (allowed.includes('*')) return { literal: '*' };
  const [only] = allowed;
  return allowed.length === 1 && only !== undefined && !only.endsWith(':*')
    ? { literal: only }
    : 'request-origin';
}

/** `CORS_ALLOWED_ORIGINS`: comma-separated, none when not set. */
export function allowedOriginsVariable() {
  return parsed(
    (text) => checkAllowedOrigins(commaList(text), { anyOrigin: true, anyPort: false }),
    { fallback: [] as readonly string[] },
  );
}
