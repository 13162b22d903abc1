/**
 * Signed calls of AWS's JSON APIs, without an SDK client (one would be most of the authorizer's
 * bundle): SigV4 by `@smithy/signature-v4`, hashed by the SDK's SHA-256 (Node's own crypto).
 */
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { text } from 'node:stream/consumers';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import { remainingBudget } from './invocation-budget.ts';

export interface SignedCallSettings {
  readonly region: string;
  /** Where the service answers; AWS's regional endpoint by default. */
  readonly endpoint?: string;
  /** The function's credentials (Lambda hands them in environment variables). */
  readonly credentials: () => {
    readonly accessKeyId: string;
    readonly secretAccessKey: string;
    readonly sessionToken?: string;
  };
  /** Each call's time limit: a registration delays a client's first request. @default 1500 */
  readonly timeoutMilliseconds?: number;
  /** Named in the user agent as `app/<id>`, as the SDK names `AWS_SDK_UA_APP_ID` (CloudTrail shows it). */
  readonly appId?: string;
}

/** One signed JSON call of an AWS service: its status and JSON body. */
export type SignedCall = (
  method: 'GET' | 'POST',
  path: string,
  options?: {
    readonly query?: Record<string, string>;
    readonly body?: object;
    readonly headers?: Record<string, string>;
  },
) => Promise<{ readonly status: number; readonly body: Record<string, unknown> }>;

export function signedCalls(service: string, settings: SignedCallSettings): SignedCall {
  const { region, endpoint = `https://${service}.${region}.amazonaws.com` } = settings;
  const origin = new URL(endpoint);
  const signer = new SignatureV4({
    service,
    region,
    credentials: async () => settings.credentials(),
    sha256: Sha256,
  });
  return async (method, path, { query = {}, body, headers = {} } = {}) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const signed = await signer.sign({
      method,
      protocol: origin.protocol,
      hostname: origin.hostname,
      ...(origin.port === '' ? {} : { port: Number(origin.port) }),
      path,
      query,
      headers: {
        host: origin.host,
        accept: 'application/json',
        'user-agent': `plant-store${settings.appId === undefined ? '' : ` app/${settings.appId}`}`,
        ...(text === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(text === undefined ? {} : { body: text }),
    });
    const url = new URL(path, origin);
    for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
    const timeout = Math.min(settings.timeoutMilliseconds ?? 1_500, Math.max(remainingBudget(), 0));
    const answer = await send(url, method, signed.headers, text, timeout);
    return { status: answer.status, body: answer.text === '' ? {} : JSON.parse(answer.text) };
  };
}

// An idle connection is closed after 4 s, before a server closes it under a later call.
const agents = {
  'http:': new HttpAgent({ keepAlive: true, timeout: 4_000 }),
  'https:': new HttpsAgent({ keepAlive: true, timeout: 4_000 }),
};

/**
 * One HTTP call on a kept-alive connection, through `node:http` as the SDK's (`fetch` would load
 * undici, tens of milliseconds, at a function's first call): its status and body's text.
 */
export function send(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
  timeoutMilliseconds: number,
): Promise<{ status: number; text: string }> {
  const call = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const agent = agents[url.protocol as keyof typeof agents];
  return new Promise((resolve, reject) => {
    const sent = call(url, { method, headers, agent, timeout: timeoutMilliseconds });
    sent.on('timeout', () => sent.destroy(new Error(`No answer within ${timeoutMilliseconds} ms`)));
    sent.on('error', reject).on('response', (response) => {
      text(response).then(
        (answer) => resolve({ status: response.statusCode ?? 0, text: answer }),
        reject,
      );
    });
    sent.end(body);
  });
}

/** The calls' region and credentials, as Lambda's runtime sets them. */
export function lambdaSignedSettings(endpoint?: string): SignedCallSettings {
  return {
    region: process.env.AWS_REGION ?? 'us-east-1',
    endpoint,
    appId: process.env.AWS_SDK_UA_APP_ID,
    credentials: () => ({
      accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? '',
      secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? '',
      sessionToken: process.env.AWS_SESSION_TOKEN,
    }),
  };
}
