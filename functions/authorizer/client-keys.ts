/**
 * Each client's API key in the stage's usage plan (docs/decisions/per-client-limits.md), made once
 * for the stage through API Gateway's REST API and recorded in the webhook log table, so a new
 * container asks the control plane nothing for a client already in the plan. Both are called
 * signed with SigV4 (`signed-calls.ts`).
 */
import { createHash } from 'node:crypto';
import {
  type SignedCall,
  type SignedCallSettings,
  signedCalls,
} from '../shared/platform/signed-calls.ts';
import { traceSignedCalls } from '../shared/platform/spans.ts';

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

/** The key a client is counted under: its own (`value`), or past the cap its bucket's. */
export type RegisterClientKey = (value: string, bucket: string) => Promise<string>;

/** One call of API Gateway's control plane: its status and JSON body. */
export type ControlPlane = SignedCall;

/** API Gateway's REST API ("Amazon API Gateway REST API Reference"), each call signed. */
export function apiGatewayControlPlane(settings: SignedCallSettings): ControlPlane {
  return traceSignedCalls('APIGateway', signedCalls('apigateway', settings));
}

/** A key's record: in the plan, or being added by a container since `claimedAt`. */
export type KeyRecord =
  | { readonly inPlan: true }
  | { readonly inPlan: false; readonly claimedAt: number };

/** What a claim came to: this container adds the key, another does or the stage's pace waits, or the cap is reached. */
export type Claim = 'taken' | 'busy' | 'full';

/** Which keys the stage's plan holds, shared by every container, and who adds a new one. */
export interface ClientKeyRecords {
  read(value: string): Promise<KeyRecord | undefined>;
  /**
   * Claims the adding of `value`: a new record (a client's counted against `cap`), or one whose
   * claim went stale at `staleClaimAt`; a claim a {@link registrationSpacingMilliseconds} a stage.
   */
  claim(
    value: string,
    options: { readonly counted: boolean; readonly cap: number; readonly staleClaimAt?: number },
  ): Promise<Claim>;
  added(value: string): Promise<void>;
}

/**
 * One key added a stage every 3 s at most: two control-plane calls (three for a key made
 * before), so the stage never takes more than a call a second of the account's 10, whatever the
 * deploys and new clients; those waiting are counted in their bucket, or as the shared client.
 */
export const registrationSpacingMilliseconds = 3_000;

/** A claim not followed by the key within this long is taken over: its container failed. */
export const staleClaimMilliseconds = 30_000;

/**
 * The records in the webhook log table (its `pk`/`sk`, never expiring), through DynamoDB's JSON
 * API: a key's item, and the stage's count of client keys and time of its last claim.
 */
export function dynamoDbKeyRecords(
  settings: SignedCallSettings,
  tableName: string,
  {
    now = Date.now,
    spacingMilliseconds = registrationSpacingMilliseconds,
  }: { readonly now?: () => number; readonly spacingMilliseconds?: number } = {},
): ClientKeyRecords {
  const call = traceSignedCalls('DynamoDB', signedCalls('dynamodb', settings));
  const dynamoDb = (operation: string, body: object) =>
    call('POST', '/', {
      body,
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': `DynamoDB_20120810.${operation}`,
      },
    });
  const keyOf = (value: string) => ({ pk: { S: `client-key#${value}` }, sk: { S: 'client-key' } });
  const count = { pk: { S: 'client-keys' }, sk: { S: 'count' } };
  const readItem = async (Key: object) => {
    const answer = await dynamoDb('GetItem', { TableName: tableName, Key, ConsistentRead: true });
    if (answer.status !== 200) throw failure('GetItem', answer);
    return answer.body.Item as Record<string, { S?: string; N?: string }> | undefined;
  };
  return {
    read: async (value) => {
      const item = await readItem(keyOf(value));
      if (item === undefined) return undefined;
      return item.state?.S === 'in-plan'
        ? { inPlan: true }
        : { inPlan: false, claimedAt: Number(item.claimedAt?.N ?? 0) };
    },
    claim: async (value, { counted, cap, staleClaimAt }) => {
      const at = { N: String(now()) };
      const isNew = staleClaimAt === undefined;
      const record = isNew
        ? {
            Put: {
              TableName: tableName,
              Item: { ...keyOf(value), state: { S: 'adding' }, claimedAt: at },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          }
        : {
            Update: {
              TableName: tableName,
              Key: keyOf(value),
              UpdateExpression: 'SET claimedAt = :at',
              ConditionExpression: '#state = :adding AND claimedAt = :stale',
              ExpressionAttributeNames: { '#state': 'state' },
              ExpressionAttributeValues: {
                ':at': at,
                ':adding': { S: 'adding' },
                ':stale': { N: String(staleClaimAt) },
              },
            },
          };
      const countsIt = counted && isNew;
      const answer = await dynamoDb('TransactWriteItems', {
        TransactItems: [
          record,
          {
            Update: {
              TableName: tableName,
              Key: count,
              UpdateExpression: countsIt ? 'SET lastAt = :at ADD n :one' : 'SET lastAt = :at',
              ConditionExpression: `(attribute_not_exists(lastAt) OR lastAt <= :paced)${countsIt ? ' AND (attribute_not_exists(n) OR n < :cap)' : ''}`,
              ExpressionAttributeValues: {
                ':at': at,
                ':paced': { N: String(now() - spacingMilliseconds) },
                ...(countsIt ? { ':one': { N: '1' }, ':cap': { N: String(cap) } } : {}),
              },
            },
          },
        ],
      });
      if (answer.status === 200) return 'taken';
      if (String(answer.body.__type ?? '').endsWith('TransactionCanceledException')) {
        const counter = await readItem(count);
        return countsIt && Number(counter?.n?.N ?? 0) >= cap ? 'full' : 'busy';
      }
      throw failure('TransactWriteItems', answer);
    },
    added: async (value) => {
      const answer = await dynamoDb('UpdateItem', {
        TableName: tableName,
        Key: keyOf(value),
        UpdateExpression: 'SET #state = :inPlan REMOVE claimedAt',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':inPlan': { S: 'in-plan' } },
      });
      if (answer.status !== 200) throw failure('UpdateItem', answer);
    },
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
 * Registers keys in the plan, each once for the stage: a key recorded in the plan costs a
 * container one read and no control-plane call (after a deploy, every client); a new one is
 * claimed by one container, at the stage's pace, and added. Past {@link clientKeyCap}, a new
 * client is counted in its bucket's key for good; while neither key is in the plan yet, as the
 * shared client. A key found by name is reused, a race ends in the other's key (409), and a
 * failure is left to a later request (the claim goes stale).
 */
export function createClientKeyRegistry(
  controlPlane: ControlPlane,
  records: ClientKeyRecords,
  usagePlanName: string,
  {
    cap = clientKeyCap,
    now = Date.now,
  }: { readonly cap?: number; readonly now?: () => number } = {},
): RegisterClientKey {
  const inPlan = new Set<string>();
  // Clients without a record once the cap is reached: counted in their bucket for good (a key is
  // never taken out of the count), so a container does not read their record again.
  const pastCap = new Set<string>();
  let full = false;
  let planId: Promise<string> | undefined;

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
  const plan = () =>
    (planId ??= findPlan().catch((error: unknown) => {
      planId = undefined;
      throw error;
    }));
  const keyIdOf = async (value: string): Promise<string> => {
    const made = await controlPlane('POST', '/apikeys', {
      body: { name: value, value, enabled: true },
    });
    if (made.status === 201 && typeof made.body.id === 'string') return made.body.id;
    if (made.status !== conflict) throw failure('CreateApiKey', made);
    // Made before (a claim that went stale after it): found by name.
    const found = await controlPlane('GET', '/apikeys', { query: { name: value } });
    if (found.status !== 200) throw failure('GetApiKeys', found);
    const existing = itemsOf(found.body).find((item) => item.name === value)?.id;
    if (typeof existing !== 'string') throw failure('GetApiKeys', found);
    return existing;
  };
  const addToPlan = async (value: string) => {
    const [usagePlanId, keyId] = await Promise.all([plan(), keyIdOf(value)]);
    const path = `/usageplans/${encodeURIComponent(usagePlanId)}/keys`;
    const added = await controlPlane('POST', path, { body: { keyId, keyType: 'API_KEY' } });
    if (added.status !== 201 && added.status !== conflict)
      throw failure('CreateUsagePlanKey', added);
  };
  /** Whether `value` is in the plan, added now when this container's claim is taken. */
  const settle = async (value: string, counted: boolean): Promise<boolean> => {
    const record = await records.read(value);
    if (record?.inPlan !== true) {
      if (record === undefined && counted && full) {
        pastCap.add(value);
        return false;
      }
      const stale = record !== undefined && record.claimedAt < now() - staleClaimMilliseconds;
      if (record !== undefined && !stale) return false;
      const claim = await records.claim(value, {
        counted,
        cap,
        ...(record === undefined ? {} : { staleClaimAt: record.claimedAt }),
      });
      if (claim === 'full') {
        full = true;
        pastCap.add(value);
      }
      if (claim !== 'taken') return false;
      await addToPlan(value);
      await records.added(value);
    }
    inPlan.add(value);
    return true;
  };
  /** One settling a key at a time in the container: its requests meanwhile wait for it. */
  const settling = new Map<string, Promise<boolean>>();
  const settled = (value: string, counted: boolean): Promise<boolean> => {
    if (inPlan.has(value)) return Promise.resolve(true);
    if (pastCap.has(value)) return Promise.resolve(false);
    let pending = settling.get(value);
    if (pending === undefined) {
      pending = settle(value, counted).finally(() => settling.delete(value));
      settling.set(value, pending);
    }
    return pending;
  };

  return async (value, bucket) => {
    if (await settled(value, true)) return value;
    if (await settled(bucket, false)) return bucket;
    return clientKeyValue(usagePlanName, sharedClient);
  };
}
