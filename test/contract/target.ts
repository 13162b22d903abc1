/**
 * What the contract suite runs against, as its files see it: a base URL, tokens for given scopes,
 * a receiver the target's functions can reach, whether it may write, and what it cannot run (each
 * listed as skipped with its reason). `global-setup.ts` writes it. Requests go through `node:http`
 * so that a host the machine does not resolve (MiniStack's `<api>.execute-api.localhost`) is sent
 * to its address with its own `Host`, and the API's `Link` URLs are followed as they are.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import path from 'node:path';
import { promisify } from 'node:util';

/** The targets, and what each cannot run. */
export const targetNames = ['npm-start', 'sam', 'emulated-stack', 'stack'] as const;
export type TargetName = (typeof targetNames)[number];

/** Capabilities a case may need that not every target has. */
export type Capability =
  | 'writes'
  | 'second-client'
  | 'webhook-receiver'
  | 'gateway-responses'
  | 'api-gateway-not-found'
  | 'binary-bodies'
  | 'cors-preflight';

/**
 * What each target cannot run, and why: one table, so that a difference is declared once.
 * `writes` (create, change, delete) is the target's own setting: a production-like stage refuses
 * them unless asked (`npm run smoke -- --allow-writes`).
 */
export const limitations: Readonly<Record<TargetName, Partial<Record<Capability, string>>>> = {
  'npm-start': {},
  sam: {
    'webhook-receiver':
      'sam local start-api runs no stream or queue event source mappings, and its endpoint functions take no receiver on this machine: no webhook is sent',
    'gateway-responses':
      'SAM does not emulate gateway responses: 401 {"message":"Unauthorized"}, 403 {"message":"User is not authorized to access this resource"}, 502 for a token the authorizer refuses',
    'api-gateway-not-found':
      'SAM answers an unknown path 403 {"message":"Missing Authentication Token"}, not 404/40400',
    'binary-bodies':
      'SAM ignores the binary media types: a body that is not UTF-8 answers 502, not 400/40001',
    'cors-preflight':
      'SAM answers a CORS preflight itself, without Access-Control-Allow-Origin, so a browser cannot call sam local start-api',
  },
  'emulated-stack': {
    'second-client': 'the stack makes one app client, so every token has its one subject',
    'cors-preflight':
      "MiniStack's mock integration does not run the response template that sets Access-Control-Allow-Origin ($context.responseOverride); test/infra/preflight-template.test.ts checks the template",
  },
  stack: {
    'second-client': 'the stack makes one app client, so every token has its one subject',
    'webhook-receiver':
      'no receiver the stage can reach runs here (a deployed stage sends to public https only)',
  },
};

/** How the target's tokens are made. */
export type TokenSource =
  | { readonly kind: 'local'; readonly dataDirectory: string }
  | {
      readonly kind: 'client-credentials';
      readonly tokenUrl: string;
      readonly clientId: string;
      readonly clientSecret: string;
    };

/** The target, as the global setup describes it. */
export interface TargetDescription {
  readonly name: TargetName;
  /** The stage's base, before `/plants`: `http://127.0.0.1:3000`, `https://…/dev`. */
  readonly baseUrl: string;
  readonly tokens: TokenSource;
  /** The address a receiver listens on so that the target's functions reach it. */
  readonly receiverHost?: string;
  /** Whether the suite may create, change and delete (it cleans up what it makes). */
  readonly writes: boolean;
  /** Documented headers the target never sends (SAM adds no `x-amzn-RequestId`). */
  readonly omitsHeaders?: readonly string[];
  /** Host names to send to 127.0.0.1 with their own `Host` header (MiniStack's API). */
  readonly loopbackHosts?: readonly string[];
  /** An origin whose pages the target lets call it (CORS), where it allows any. */
  readonly browserOrigin?: string;
}

/** The environment variable naming the description's file. */
export const targetFileVariable = 'PLANT_STORE_CONTRACT_TARGET_FILE';

let described: TargetDescription | undefined;

/** The target of this run. */
export function target(): TargetDescription {
  if (described === undefined) {
    const file = process.env[targetFileVariable];
    if (file === undefined) {
      throw new Error(`${targetFileVariable} is not set: run the contract suite through Jest.`);
    }
    described = JSON.parse(readFileSync(file, 'utf8')) as TargetDescription;
  }
  return described;
}

/** Why the target cannot run a case needing `capability`, or `undefined` when it can. */
export function cannotRun(capability: Capability): string | undefined {
  const description = target();
  if (capability === 'writes' && !description.writes) {
    return 'a production-like stage is not written to unless asked (--allow-writes)';
  }
  const limitation = limitations[description.name][capability];
  if (limitation !== undefined) return limitation;
  if (capability === 'cors-preflight' && description.browserOrigin === undefined) {
    return 'the stage lets no browser origin call it (cors.allowedOrigins)';
  }
  return undefined;
}

const tokenCache = new Map<string, string>();
const run = promisify(execFile);
const repositoryRoot = path.resolve(import.meta.dirname, '../..');

/**
 * A token for `subject` (a second client, where the target has one) with `scope`, as a client
 * of the target gets one: `npm run -s token` locally, the client-credentials grant of the stack's
 * pool when deployed.
 */
export async function tokenFor(scope: string, subject = 'contract-client'): Promise<string> {
  const key = `${scope}|${subject}`;
  const cached = tokenCache.get(key);
  if (cached !== undefined) return cached;
  const { tokens } = target();
  let token: string;
  if (tokens.kind === 'local') {
    const { stdout } = await run(
      'npm',
      ['run', '-s', 'token', '--', '--scope', scope, '--subject', subject],
      {
        cwd: repositoryRoot,
        env: { ...process.env, PLANT_STORE_DATA_DIR: tokens.dataDirectory },
      },
    );
    token = stdout.trim();
  } else {
    const answer = await send('POST', tokens.tokenUrl, {
      headers: {
        Authorization: `Basic ${Buffer.from(`${tokens.clientId}:${tokens.clientSecret}`).toString('base64')}`,
        'Content-Type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope }).toString(),
    });
    if (answer.status !== 200) {
      throw new Error(`The token endpoint answered ${answer.status}: ${answer.text}`);
    }
    token = (answer.json() as { access_token: string }).access_token;
  }
  tokenCache.set(key, token);
  return token;
}

/** A writer's token (both plant scopes) and a reader's (`plants/read` alone). */
export async function plantTokens(): Promise<{ writer: string; reader: string }> {
  const [writer, reader] = await Promise.all([
    tokenFor('plants/read plants/write'),
    tokenFor('plants/read'),
  ]);
  return { writer, reader };
}

/** An answer: status, headers (lower-case names), body text, and the body as JSON. */
export interface Answer {
  /** The URL requested (what a relative `Link` resolves against). */
  readonly url: string;
  readonly status: number;
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly text: string;
  json(): unknown;
}

export interface RequestOptions {
  readonly token?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Uint8Array;
}

/**
 * A request to the target: `path` under its base URL (`/plants`), or an absolute URL. A `429` is
 * sent again after its `Retry-After`, as the contract tells clients to: the suite is one client,
 * and the stage limits each client per route (no case is about a limit).
 */
export async function call(method: string, pathOrUrl: string, options: RequestOptions = {}) {
  const url = pathOrUrl.startsWith('http') ? pathOrUrl : `${target().baseUrl}${pathOrUrl}`;
  for (let tries = 1; ; tries += 1) {
    const answer = await send(method, url, {
      ...options,
      headers: {
        ...(options.token === undefined ? {} : { Authorization: `Bearer ${options.token}` }),
        ...options.headers,
      },
    });
    if (answer.status !== 429 || tries === 10) return answer;
    const seconds = Number(answer.headers['retry-after'] ?? 1);
    await new Promise((resolve) =>
      setTimeout(resolve, (Number.isFinite(seconds) ? seconds : 1) * 1000),
    );
  }
}

/**
 * The `next` link of a list answer as an absolute URL: a `Link` holds a URI reference, resolved
 * against the URL requested (RFC 8288 §3.2); API Gateway writes absolute ones, MiniStack,
 * without the request's domain, path-absolute ones.
 */
export function nextLinkOf(answer: Answer): string | undefined {
  const reference = /<([^>]+)>;\s*rel="next"/.exec(answer.headers.link ?? '')?.[1];
  return reference === undefined ? undefined : new URL(reference, answer.url).href;
}

/** One HTTP exchange; a loopback host of the target is sent to 127.0.0.1 with its `Host`. */
function send(method: string, url: string, options: RequestOptions): Promise<Answer> {
  const parsed = new URL(url);
  const loopback = (described?.loopbackHosts ?? []).includes(parsed.hostname);
  const request = parsed.protocol === 'https:' ? httpsRequest : httpRequest;
  const body =
    options.body === undefined
      ? undefined
      : typeof options.body === 'string'
        ? Buffer.from(options.body, 'utf8')
        : Buffer.from(options.body);
  return new Promise((resolve, reject) => {
    const sent = request(
      {
        method,
        protocol: parsed.protocol,
        hostname: loopback ? '127.0.0.1' : parsed.hostname,
        port: parsed.port,
        path: `${parsed.pathname}${parsed.search}`,
        headers: {
          ...(loopback ? { Host: parsed.host } : {}),
          ...(body === undefined ? {} : { 'Content-Length': String(body.byteLength) }),
          ...options.headers,
        },
        timeout: 60_000,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            url,
            status: response.statusCode ?? 0,
            headers: Object.fromEntries(
              Object.entries(response.headers).map(([name, value]) => [
                name,
                Array.isArray(value) ? value.join(', ') : value,
              ]),
            ),
            text,
            json: () => JSON.parse(text),
          });
        });
        response.on('error', reject);
      },
    );
    sent.on('timeout', () => sent.destroy(new Error(`No answer from ${method} ${url}`)));
    sent.on('error', reject);
    sent.end(body);
  });
}
