/**
 * Each client's API key in the stage's usage plan (docs/decisions/per-client-limits.md), made on
 * first sight through API Gateway's REST API, signed with SigV4 (an SDK client would be most of
 * the authorizer's bundle).
 */
import { createHash, createHmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { remainingBudget } from '../shared/platform/invocation-budget.ts';

/** The client every request is counted as while its own key cannot be made. */
export const sharedClient = '*';

/**
 * A client's key value, derived so every container and the stack agree. No secret: with the key
 * source `AUTHORIZER`, API Gateway ignores keys requests carry (API Gateway developer guide).
 */
export function clientKeyValue(usagePlanName: string, client: string): string {
  return createHash('sha256').update(`${usagePlanName}\n${client}`).digest('base64url');
}

/**
 * How many keys a stage's plan holds before new clients are counted in hashed buckets for good:
 * API Gateway allows 10,000 keys an account and Region, for every stage together, never more.
 */
export const clientKeyCap = 4_000;

/** The buckets clients past the cap share, each a key of the plan: a flooder slows 1/64 of them. */
export const clientKeyBuckets = 64;

/** The key of the bucket a client past the cap is counted in: the same in every container. */
export function bucketKeyValue(usagePlanName: string, client: string): string {
  const bucket = createHash('sha256').update(client).digest().readUInt32BE(0) % clientKeyBuckets;
  return clientKeyValue(usagePlanName, `bucket ${bucket}`);
}

/**
 * The key a client is counted under, once it is one of the plan's: its own (`value`), or past
 * the cap its bucket's (`bucket`).
 */
export type RegisterClientKey = (value: string, bucket: string) => Promise<string>;

/** One call of API Gateway's control plane: its status and JSON body. */
export type ControlPlane = (
  method: 'GET' | 'POST',
  path: string,
  options?: { readonly query?: Record<string, string>; readonly body?: object },
) => Promise<{ readonly status: number; readonly body: Record<string, unknown> }>;

export interface ControlPlaneSettings {
  readonly region: string;
  /** Where API Gateway's REST API answers; `https://apigateway.<region>.amazonaws.com` by default. */
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

/** SHA-256 (and its HMAC) as the signer wants it, from Node's own crypto. */
class Sha256 {
  private readonly hash;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
}

function bytes(data: string | ArrayBuffer | ArrayBufferView): string | Uint8Array {
  if (typeof data === 'string') return data;
  return ArrayBuffer.isView(data)
    ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
    : new Uint8Array(data);
}

/** API Gateway's REST API ("Amazon API Gateway REST API Reference"), each call signed. */
export function apiGatewayControlPlane(settings: ControlPlaneSettings): ControlPlane {
  const origin = new URL(
    settings.endpoint ?? `https://apigateway.${settings.region}.amazonaws.com`,
  );
  const signer = new SignatureV4({
    service: 'apigateway',
    region: settings.region,
    credentials: async () => settings.credentials(),
    sha256: Sha256,
  });
  return async (method, path, { query = {}, body } = {}) => {
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
        'user-agent': `plant-store-authorizer${settings.appId === undefined ? '' : ` app/${settings.appId}`}`,
        ...(text === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(text === undefined ? {} : { body: text }),
    });
    const url = new URL(path, origin);
    for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
    const { host: _host, ...headers } = signed.headers;
    const response = await fetch(url, {
      method,
      headers,
      ...(text === undefined ? {} : { body: text }),
      signal: AbortSignal.timeout(
        Math.min(settings.timeoutMilliseconds ?? 1_500, Math.max(remainingBudget(), 0)),
      ),
    });
    const answer = await response.text();
    return { status: response.status, body: answer === '' ? {} : JSON.parse(answer) };
  };
}

/** The control plane's items of a list answer (`item`, as its REST API names them). */
function itemsOf(body: Record<string, unknown>): Record<string, unknown>[] {
  return Array.isArray(body.item) ? (body.item as Record<string, unknown>[]) : [];
}

function failure(call: string, answer: { status: number; body: Record<string, unknown> }): Error {
  return new Error(`${call} answered ${answer.status}: ${String(answer.body.message ?? '')}`);
}

/** 409: the key, or the plan's key, is there already (another container made it). */
const conflict = 409;

/**
 * Registers keys in the plan, each once per container: the plan's keys are listed once (500 a
 * call), so a new container asks nothing more for a client already in the plan (after a deploy,
 * every client); past {@link clientKeyCap}, a new client is counted in its bucket's key for good.
 * A new key found by name is reused, a race ends in the other's key (409), and a failure is
 * forgotten, so the next request tries again.
 */
export function createClientKeyRegistry(
  controlPlane: ControlPlane,
  usagePlanName: string,
  { cap = clientKeyCap }: { readonly cap?: number } = {},
): RegisterClientKey {
  const registered = new Map<string, Promise<void>>();
  let planId: Promise<string> | undefined;
  let planKeys: Promise<Set<string>> | undefined;

  const findPlan = async () => {
    for (let position: string | undefined; ; ) {
      const answer = await controlPlane('GET', '/usageplans', {
        query: { limit: '500', ...(position === undefined ? {} : { position }) },
      });
      if (answer.status !== 200) throw failure('GetUsagePlans', answer);
      const plan = itemsOf(answer.body).find((item) => item.name === usagePlanName);
      if (typeof plan?.id === 'string') return plan.id;
      position = typeof answer.body.position === 'string' ? answer.body.position : undefined;
      if (position === undefined) throw new Error(`No usage plan named ${usagePlanName}`);
    }
  };
  const keyIdOf = async (value: string, looked = false): Promise<string> => {
    const found = await controlPlane('GET', '/apikeys', { query: { name: value } });
    if (found.status !== 200) throw failure('GetApiKeys', found);
    const existing = itemsOf(found.body).find((item) => item.name === value)?.id;
    if (typeof existing === 'string') return existing;
    const made = await controlPlane('POST', '/apikeys', {
      body: { name: value, value, enabled: true },
    });
    // Made meanwhile by another container: look once more.
    if (made.status === conflict && !looked) return keyIdOf(value, true);
    if (made.status !== 201 || typeof made.body.id !== 'string') {
      throw failure('CreateApiKey', made);
    }
    return made.body.id;
  };
  /** The values of the plan's keys, every page (`GetUsagePlanKeys`, 500 a page). */
  const listPlanKeys = async (usagePlanId: string) => {
    const values = new Set<string>();
    for (let position: string | undefined; ; ) {
      const answer = await controlPlane(
        'GET',
        `/usageplans/${encodeURIComponent(usagePlanId)}/keys`,
        {
          query: { limit: '500', ...(position === undefined ? {} : { position }) },
        },
      );
      if (answer.status !== 200) throw failure('GetUsagePlanKeys', answer);
      // Each key is named by its value (`keyIdOf`): either names it.
      for (const item of itemsOf(answer.body)) {
        for (const field of [item.value, item.name]) {
          if (typeof field === 'string') values.add(field);
        }
      }
      position = typeof answer.body.position === 'string' ? answer.body.position : undefined;
      if (position === undefined) return values;
    }
  };
  const plan = () =>
    (planId ??= findPlan().catch((error: unknown) => {
      planId = undefined;
      throw error;
    }));
  const register = async (value: string) => {
    const [usagePlanId, keyId] = await Promise.all([plan(), keyIdOf(value)]);
    const added = await controlPlane(
      'POST',
      `/usageplans/${encodeURIComponent(usagePlanId)}/keys`,
      {
        body: { keyId, keyType: 'API_KEY' },
      },
    );
    if (added.status !== 201 && added.status !== conflict)
      throw failure('CreateUsagePlanKey', added);
  };

  /** Adds a key to the plan, once per container; a failure is forgotten. */
  const added = (value: string) => {
    let registration = registered.get(value);
    if (registration === undefined) {
      registration = register(value).catch((error: unknown) => {
        registered.delete(value);
        throw error;
      });
      registered.set(value, registration);
    }
    return registration;
  };

  return async (value, bucket) => {
    planKeys ??= plan()
      .then(listPlanKeys)
      .catch((error: unknown) => {
        planKeys = undefined;
        throw error;
      });
    // Unlisted (the control plane refused the list): the client's own calls, as before.
    const known = await planKeys.catch(() => undefined);
    if (known?.has(value)) return value;
    const chosen = known !== undefined && known.size >= cap ? bucket : value;
    if (!known?.has(chosen)) await added(chosen);
    known?.add(chosen);
    return chosen;
  };
}
