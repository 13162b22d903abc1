/**
 * `Idempotency-Key` on the endpoint POSTs that are not idempotent (create, test, recover, rotate),
 * as Stripe's API and the IETF's draft-ietf-httpapi-idempotency-key-header have it: a retry with
 * the key answers what the first request did, `Idempotent-Replayed: true`. Keys are the owner's,
 * kept a day in the webhook log; only a 2xx is kept, so after a failure a retry runs again. A
 * create keeps its answer in the transaction that makes the endpoint, if the key has none: a retry
 * finds the endpoint's answer or no endpoint. The others hold the key while they work (a retry
 * meanwhile answers 409) and keep the answer after: one whose invocation ended between runs again.
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { endpointErrorCodes } from '../shared/errors/error-codes.ts';
import { ApiError } from '../shared/errors/errors.ts';
import { jsonTextResponse } from '../shared/http/api-responses.ts';
import { findHeader } from '../shared/http/request.ts';
import { routeMarginMilliseconds } from '../shared/http/route-handler.ts';
import { conditionFailed, sendToStore, writeIf } from '../shared/platform/dynamodb.ts';
import { onMargin, remainingBudget } from '../shared/platform/invocation-budget.ts';
import type { EndpointRequest } from './endpoint-request.ts';
import type { SecretBox } from './secret-box.ts';

/** How long a key answers its retries: a day, as Stripe keeps one. */
export const keptKeyMilliseconds = 24 * 60 * 60 * 1000;

/** The header a replayed answer carries (Stripe's name), `true`. */
export const replayedHeader = 'Idempotent-Replayed';

/** What a request answered, and the secret in it sealed, for its retries. */
export interface Answer {
  readonly response: APIGatewayProxyResult;
  /** The answer's `secret`, sealed for `endpointId`: only its seal is kept. */
  readonly secret?: { readonly sealed: string; readonly endpointId: string };
}

type TransactPut = NonNullable<
  NonNullable<TransactWriteCommandInput['TransactItems']>[number]['Put']
>;

/** The key of a create, whose answer its own transaction keeps. */
export interface KeyForWrite {
  /** The transaction item that keeps `answer`, if the key has none yet. */
  keptIn(answer: Answer): { readonly Put: TransactPut };
}

interface Key {
  readonly item: { readonly pk: string; readonly sk: string };
  readonly fingerprint: string;
  readonly now: number;
  readonly tableName: string;
}

type KeptItem = Record<string, unknown>;

/**
 * 1 to 255 printable ASCII characters: bare (Stripe's form, no `"`), or a quoted structured-field
 * string (the IETF draft's; spaces allowed, no `"` or backslash).
 */
const keyPattern = /^(?:"([\x20\x21\x23-\x5b\x5d-\x7e]{1,255})"|([\x21\x23-\x7e]{1,255}))$/;

/** A create's answer under its key, kept by the write it makes. @throws ApiError 40030, 42200 */
export async function answerOnceInWrite(
  request: EndpointRequest,
  operation: string,
  secrets: Pick<SecretBox, 'open'>,
  work: (key: KeyForWrite | undefined) => Promise<Answer>,
): Promise<APIGatewayProxyResult> {
  const key = keyOf(request, operation);
  if (key === undefined) return (await work(undefined)).response;
  const kept = await keptAnswer(key, request);
  if (kept !== undefined) return replay(kept, secrets);
  try {
    return (await work({ keptIn: (answer) => ({ Put: keptItem(key, answer) }) })).response;
  } catch (error) {
    // Another request with the key made its endpoint first: its answer is this one's.
    if (!(error instanceof ApiError && error.code === endpointErrorCodes.idempotencyKeyInUse)) {
      throw error;
    }
    const first = await keptAnswer(key, request);
    if (first === undefined) throw error;
    return replay(first, secrets);
  }
}

/** `work`'s answer under its key, held while it runs. @throws ApiError 40030, 40901, 42200 */
export async function answerOnce(
  request: EndpointRequest,
  operation: string,
  secrets: Pick<SecretBox, 'open'> | undefined,
  work: () => Promise<Answer>,
): Promise<APIGatewayProxyResult> {
  const key = keyOf(request, operation);
  if (key === undefined) return (await work()).response;
  const lease = await take(key, request);
  if (typeof lease !== 'string') return replay(lease, secrets);
  const { documentClient } = request.stores;
  const whileHeld = {
    ConditionExpression: 'lease = :lease',
    ExpressionAttributeValues: { ':lease': lease },
  };
  let answer: Answer;
  try {
    answer = await work();
  } catch (error) {
    // Let go, so that a retry runs again (if the store cannot be reached, once the lease ends).
    const release = new DeleteCommand({ TableName: key.tableName, Key: key.item, ...whileHeld });
    await onMargin(() =>
      writeIf((abortSignal) => documentClient.send(release, { abortSignal })),
    ).catch(() => undefined);
    throw error;
  }
  const keep = new PutCommand({ ...keptItem(key, answer), ...whileHeld });
  // The work is done and its answer stands; a retry after a failed keep runs again.
  await onMargin(() => writeIf((abortSignal) => documentClient.send(keep, { abortSignal }))).catch(
    (error) => request.logger.warn('idempotency key answer not kept', { error }),
  );
  return answer.response;
}

/** The request's key. @throws ApiError 40030 */
function keyOf(request: EndpointRequest, operation: string): Key | undefined {
  const header = findHeader(request.event, 'idempotency-key');
  if (header === undefined) return undefined;
  const match = keyPattern.exec(header.trim());
  if (match === null) throw new ApiError(endpointErrorCodes.invalidIdempotencyKey);
  return {
    item: { pk: `idempotency#${request.owner}`, sk: match[1] ?? match[2] ?? '' },
    // The same request: the same operation on the same endpoint with the same body.
    fingerprint: createHash('sha256')
      .update(`${operation}\n${request.event.pathParameters?.endpointId ?? ''}\n`)
      .update(request.event.body ?? '')
      .digest('base64url'),
    now: request.now(),
    tableName: request.stores.logTableName,
  };
}

/** The item that keeps `answer` (its secret sealed), if the key has no answer unexpired. */
function keptItem(key: Key, answer: Answer): TransactPut {
  const { response, secret } = answer;
  const body =
    secret === undefined
      ? response.body
      : JSON.stringify({ ...JSON.parse(response.body), secret: undefined });
  return {
    TableName: key.tableName,
    Item: {
      ...key.item,
      state: 'answered',
      fingerprint: key.fingerprint,
      expiresAt: Math.ceil((key.now + keptKeyMilliseconds) / 1000),
      answer: {
        statusCode: response.statusCode,
        headers: response.headers ?? {},
        body,
        ...(secret === undefined
          ? {}
          : { sealedSecret: secret.sealed, secretOf: secret.endpointId }),
      },
    },
    ConditionExpression: 'attribute_not_exists(pk) OR expiresAt <= :nowSeconds',
    ExpressionAttributeValues: { ':nowSeconds': nowSeconds(key) },
  };
}

/** The key's unexpired answer, if it has one. @throws ApiError 42200, 40901 (a lease held) */
async function keptAnswer(key: Key, request: EndpointRequest): Promise<KeptItem | undefined> {
  const get = new GetCommand({ TableName: key.tableName, Key: key.item, ConsistentRead: true });
  const { Item } = await sendToStore(request.stores, get);
  if (Item === undefined || Number(Item.expiresAt) <= nowSeconds(key)) return undefined;
  if (Item.fingerprint !== key.fingerprint) {
    throw new ApiError(endpointErrorCodes.idempotencyKeyReused);
  }
  if (Item.state === 'answered') return Item;
  if (Number(Item.leaseUntil) <= key.now) return undefined;
  throw new ApiError(endpointErrorCodes.idempotencyKeyInUse, undefined, {
    retryAfterSeconds: (Number(Item.leaseUntil) - key.now) / 1000,
  });
}

const nowSeconds = (key: Key) => Math.floor(key.now / 1000);

/** Takes the key for this invocation: its lease, or the answer the key has. */
async function take(key: Key, request: EndpointRequest, tries = 2): Promise<string | KeptItem> {
  const lease = randomUUID();
  // Held until this invocation has surely ended: its work's time and its margin, and a second.
  const budget = remainingBudget();
  const leaseUntil =
    key.now + (Number.isFinite(budget) ? budget : 30_000) + routeMarginMilliseconds + 1_000;
  const claim = new PutCommand({
    TableName: key.tableName,
    Item: {
      ...key.item,
      state: 'started',
      fingerprint: key.fingerprint,
      lease,
      leaseUntil,
      expiresAt: Math.ceil((key.now + keptKeyMilliseconds) / 1000),
    },
    ConditionExpression:
      'attribute_not_exists(pk) OR expiresAt <= :nowSeconds OR (#state = :started AND leaseUntil <= :now)',
    ExpressionAttributeNames: { '#state': 'state' },
    ExpressionAttributeValues: {
      ':nowSeconds': nowSeconds(key),
      ':started': 'started',
      ':now': key.now,
    },
  });
  const taken = await writeIf((abortSignal) =>
    request.stores.documentClient.send(claim, { abortSignal }),
  );
  if (!conditionFailed(taken)) return lease;
  const kept = await keptAnswer(key, request);
  if (kept !== undefined) return kept;
  // Let go, or its lease ended, meanwhile: taken again.
  if (tries > 1) return take(key, request, tries - 1);
  throw new ApiError(endpointErrorCodes.idempotencyKeyInUse, undefined, { retryAfterSeconds: 1 });
}

/** The kept answer, its secret opened again and put back last, where the answer had it. */
async function replay(
  item: KeptItem,
  secrets: Pick<SecretBox, 'open'> | undefined,
): Promise<APIGatewayProxyResult> {
  const answer = item.answer as {
    statusCode: number;
    headers: Record<string, string>;
    body: string;
    sealedSecret?: string;
    secretOf?: string;
  };
  let { body } = answer;
  if (answer.sealedSecret !== undefined) {
    if (secrets === undefined)
      throw new Error('A kept answer holds a secret, and no box opens it.');
    const secret = await secrets.open(answer.sealedSecret, answer.secretOf ?? '');
    body = JSON.stringify({ ...JSON.parse(body), secret });
  }
  const { 'Content-Type': _, ...headers } = answer.headers;
  headers[replayedHeader] = 'true';
  return jsonTextResponse(Number(answer.statusCode), body, headers);
}
