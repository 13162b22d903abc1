/**
 * Cross-origin requests from browsers (the Fetch standard's CORS protocol): which origins a
 * stage allows and the headers its answers carry. One definition for the functions (their
 * answers), the CDK stack (preflights and the gateway's own answers) and the local API.
 *
 * Plain data and functions: the functions' bundles and the local API import it.
 */

/** What a browser may send and read, the same on every route. */
export const corsSettings = {
  /** Request headers a page may set (besides the ones the Fetch standard always allows). */
  allowedHeaders: ['Authorization', 'Content-Type', 'If-Match', 'If-None-Match'],
  /** Response headers a page may read (besides the CORS-safelisted ones). */
  exposedHeaders: ['ETag', 'Link', 'Retry-After', 'WWW-Authenticate', 'x-amzn-RequestId'],
  /** How long a browser may reuse a preflight's answer (Chromium keeps it at most 2 hours). */
  maxAgeSeconds: 7200,
} as const;

/**
 * An allowed origin is an exact origin (`https://app.example.com`, `http://localhost:5173`),
 * `*` for any origin (not in production-like stages), or, for the local API only, a scheme and
 * host with any port (`http://localhost:*`).
 */
const originPattern = /^https?:\/\/[a-z0-9.-]+(:([0-9]{1,5}|\*))?$/;

/**
 * Checks a stage's or `npm start`'s list of allowed origins.
 * @throws Error naming the first origin that is not one, or `*` where it is not allowed.
 */
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

/** What every answer to an allowed origin lets the page read, and says it varies by. */
const exposed = {
  'Access-Control-Expose-Headers': corsSettings.exposedHeaders.join(', '),
  Vary: 'Origin',
} as const;

/**
 * The CORS headers of an answer to a request with `origin` (the `Origin` header, if any): none
 * when the stage allows no origin; `Vary: Origin` whenever it does (the answer depends on it);
 * `Access-Control-Allow-Origin` and the exposed headers only for an allowed origin.
 */
export function corsHeaders(
  origin: string | undefined,
  allowed: readonly string[],
): Record<string, string> {
  if (allowed.length === 0) return {};
  const allowOrigin = allowOriginHeader(origin, allowed);
  if (allowOrigin === undefined) return { Vary: 'Origin' };
  return { ...allowOrigin, ...exposed };
}

/**
 * `Access-Control-Allow-Origin` for a request with `origin`: `*` when any origin is allowed, the
 * origin itself when it is allowed, none otherwise.
 */
export function allowOriginHeader(
  origin: string | undefined,
  allowed: readonly string[],
): { readonly 'Access-Control-Allow-Origin': string } | undefined {
  if (origin === undefined || !isOriginAllowed(origin, allowed)) return undefined;
  return { 'Access-Control-Allow-Origin': allowed.includes('*') ? '*' : origin };
}

/**
 * A preflight's answer for a resource, but for `Access-Control-Allow-Origin` (set only for an
 * allowed origin): its methods, the request headers a page may send, how long to keep it.
 */
export function preflightHeaders(methods: readonly string[]): Record<string, string> {
  return {
    'Access-Control-Allow-Methods': [...methods, 'OPTIONS'].join(', '),
    'Access-Control-Allow-Headers': corsSettings.allowedHeaders.join(', '),
    'Access-Control-Max-Age': String(corsSettings.maxAgeSeconds),
    Vary: 'Origin',
  };
}

/**
 * The CORS headers of the gateway's own answers: the literals, and whether the request's
 * `Origin` is repeated as `Access-Control-Allow-Origin` (see {@link gatewayAllowOrigin}).
 */
export function gatewayResponseCors(allowed: readonly string[]): {
  readonly literals: Readonly<Record<string, string>>;
  readonly echoOrigin: boolean;
} {
  const allowOrigin = gatewayAllowOrigin(allowed);
  if (allowOrigin === undefined) return { literals: {}, echoOrigin: false };
  if (allowOrigin === 'request-origin') return { literals: exposed, echoOrigin: true };
  return {
    literals: { ...exposed, 'Access-Control-Allow-Origin': allowOrigin.literal },
    echoOrigin: false,
  };
}

/**
 * The `Access-Control-Allow-Origin` of the gateway's own answers (401, 403, 404, 429, 5xx).
 * API Gateway fills a gateway response's headers from literals or request parameters only, with
 * no condition ("x-amazon-apigateway-gateway-responses.responseParameters"): one allowed origin
 * is written as it is, `*` as `*`, and several are answered with the request's own `Origin`, so
 * that every allowed page can read every error (an error body holds no data).
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
