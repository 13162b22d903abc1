/**
 * No one gets in without a valid token: the authorizer's attack cases, end to end through the
 * local API (its gateway stand-in, the real authorizer fetching the issuer's JWKS over HTTP, the
 * real create function), plus fuzzed Authorization headers and tampered tokens. Nothing but the
 * positive controls may be stored.
 *
 * @services dynamodb-local
 */
import { createPublicKey } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { errorBody, gatewayErrorCodes } from '../../functions/shared/errors/error-codes.ts';
import { localAudience, localIssuer } from '../../local/token-issuer.ts';
import {
  type Claims,
  createSigningKey,
  encodeJson,
  hmacWithPublicKeyToken,
  nowInSeconds,
  signToken,
  type TestSigningKey,
  unsignedToken,
} from '../functions/authorizer/token-factory.ts';
import { createTestTable, type TestTable } from '../support/test-store.ts';
import { type ApiProcess, startApiProcess, unthrottled } from './api-process.ts';
import { findLogLeaks } from './log-audit.ts';
import { postPlant, type TimedAnswer } from './plant-client.ts';
import { auditStore, cleanAudit, type ExpectedPlant, scanStoredItems } from './stored-plants.ts';

const seed = 7_2025;
const fuzzRuns = 150;

let api: ApiProcess;
let table: TestTable;
/** The local issuer's key, in the shape the token factory signs with. */
let issuerKey: TestSigningKey;
/** A key the issuer never published. */
let attackerKey: TestSigningKey;
const acknowledged = new Map<string, ExpectedPlant>();
const sentAuthorizations: string[] = [];
let nextId = BigInt(Date.now()) * 1_000n;

function validClaims(overrides: Claims = {}): Claims {
  const now = nowInSeconds();
  return {
    iss: localIssuer,
    aud: localAudience,
    sub: 'reliability-client',
    scope: 'plants/write',
    iat: now,
    exp: now + 600,
    ...overrides,
  };
}

/** Creates a new plant with `authorization` as the header's whole value (none when `undefined`). */
async function createWith(authorization: string | undefined): Promise<TimedAnswer> {
  nextId += 1n;
  const name = `Guarded ${nextId}`;
  if (authorization !== undefined) sentAuthorizations.push(authorization);
  const answer = await postPlant(api.url, `{"id":${nextId},"name":"${name}"}`, {
    headers: authorization === undefined ? {} : { Authorization: authorization },
  });
  if (answer.status === 200) acknowledged.set(String(nextId), { name });
  return answer;
}

function expectUnauthorized(answer: TimedAnswer): void {
  expect({ status: answer.status, body: answer.body }).toEqual({
    status: 401,
    body: errorBody(gatewayErrorCodes.unauthorized),
  });
  expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer realm=/);
}

beforeAll(async () => {
  table = await createTestTable();
  api = await startApiProcess({
    storeUrl: table.url,
    tableName: table.tableName,
    throttling: unthrottled,
  });
  const publicKey = createPublicKey(api.keys.privateKey);
  issuerKey = {
    kid: api.keys.kid,
    algorithm: 'RS256',
    privateKey: api.keys.privateKey,
    publicKey,
    publicJwk: { ...publicKey.export({ format: 'jwk' }), kid: api.keys.kid },
  };
  attackerKey = createSigningKey('RS256', 'attacker-key');
});

afterAll(async () => {
  await api?.stop();
  await table?.remove();
});

describe('through the local API', () => {
  it('lets in a valid token (the positive control)', async () => {
    expect((await createWith(`Bearer ${signToken(issuerKey, validClaims())}`)).status).toBe(200);
    expect((await createWith(`bearer ${api.signToken()}`)).status).toBe(200);
  });

  it.each([
    ['no Authorization header', () => undefined],
    ['an empty Authorization header', () => ''],
    ['the scheme without a token', () => 'Bearer '],
    ['another scheme', () => `Basic ${Buffer.from('admin:admin').toString('base64')}`],
    ['the token without a scheme', () => signToken(issuerKey, validClaims())],
    ['a malformed token', () => 'Bearer not-a-jwt'],
    [
      'two parts only',
      () => `Bearer ${signToken(issuerKey, validClaims()).split('.').slice(0, 2).join('.')}`,
    ],
    ['8 KiB of garbage', () => `Bearer ${'A'.repeat(8 * 1024)}`],
    [
      'a payload changed after signing',
      () => {
        const [header, , signature] = signToken(issuerKey, validClaims()).split('.');
        return `Bearer ${header}.${encodeJson(validClaims({ sub: 'admin' }))}.${signature}`;
      },
    ],
    [
      "another key signing under the issuer's kid",
      () => `Bearer ${signToken({ ...attackerKey, kid: issuerKey.kid }, validClaims())}`,
    ],
    ['a key the issuer never published', () => `Bearer ${signToken(attackerKey, validClaims())}`],
    [
      'a jku header pointing at the attacker’s keys',
      () =>
        `Bearer ${signToken(attackerKey, validClaims(), { jku: 'http://127.0.0.1:9/jwks.json' })}`,
    ],
    [
      'alg none without a signature',
      () => `Bearer ${unsignedToken(validClaims(), { kid: issuerKey.kid })}`,
    ],
    [
      'alg none with a signature part',
      () => `Bearer ${unsignedToken(validClaims(), { kid: issuerKey.kid }, 'AAAA')}`,
    ],
    [
      'HS256 keyed with the public key',
      () => `Bearer ${hmacWithPublicKeyToken(issuerKey, validClaims())}`,
    ],
    [
      'an ES256 header over an RSA signature',
      () => `Bearer ${signToken(issuerKey, validClaims(), { alg: 'ES256' })}`,
    ],
    [
      'a path in the kid',
      () => `Bearer ${signToken(issuerKey, validClaims(), { kid: '../../../etc/passwd' })}`,
    ],
    [
      'an expired token',
      () => `Bearer ${signToken(issuerKey, validClaims({ exp: nowInSeconds() - 60 }))}`,
    ],
    [
      'a token not valid yet',
      () => `Bearer ${signToken(issuerKey, validClaims({ nbf: nowInSeconds() + 600 }))}`,
    ],
    [
      'a token that never expires',
      () => `Bearer ${signToken(issuerKey, validClaims({ exp: undefined }))}`,
    ],
    [
      'a token without a subject',
      () => `Bearer ${signToken(issuerKey, validClaims({ sub: undefined }))}`,
    ],
    [
      'another issuer',
      () => `Bearer ${signToken(issuerKey, validClaims({ iss: 'https://evil.example' }))}`,
    ],
    [
      'another audience',
      () => `Bearer ${signToken(issuerKey, validClaims({ aud: 'another-api' }))}`,
    ],
  ])(
    'answers 401/40100 with WWW-Authenticate for %s, storing nothing',
    async (_case, authorization) => {
      expectUnauthorized(await createWith(authorization()));
    },
  );

  it.each([
    ['another scope', 'plants/read'],
    ['no scope at all', ''],
    ['a scope that only starts like the required one', 'plants/write-all'],
    ['the required scope in other case', 'PLANTS/WRITE'],
  ])('answers 403/40300 for a valid token with %s, storing nothing', async (_case, scope) => {
    const answer = await createWith(
      `Bearer ${signToken(issuerKey, validClaims({ scope: scope || undefined }))}`,
    );
    expect({ status: answer.status, body: answer.body }).toEqual({
      status: 403,
      body: errorBody(gatewayErrorCodes.forbidden),
    });
    expect(answer.headers.get('www-authenticate')).toMatch(/insufficient_scope/);
  });

  it(`answers 401/40100 to any fuzzed Authorization header (${fuzzRuns} cases)`, async () => {
    const printable = fc.string({
      unit: fc.integer({ min: 0x21, max: 0x7e }).map((code) => String.fromCharCode(code)),
      minLength: 1,
      maxLength: 300,
    });
    const header = fc.oneof(
      printable,
      printable.map((text) => `Bearer ${text}`),
      fc.tuple(printable, printable, printable).map((parts) => `Bearer ${parts.join('.')}`),
    );
    await fc.assert(
      fc.asyncProperty(header, async (authorization) => {
        expectUnauthorized(await createWith(authorization));
      }),
      { seed, numRuns: fuzzRuns },
    );
  }, 180_000);

  it(`answers 401/40100 to a valid token with any one character changed (${fuzzRuns} cases)`, async () => {
    const token = signToken(issuerKey, validClaims());
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.';
    // Not the last character: its low bits are padding, so some changes decode to the same bytes.
    const tampering = fc
      .record({
        position: fc.integer({ min: 0, max: token.length - 2 }),
        replacement: fc.constantFrom(...alphabet.split('')),
      })
      .filter(({ position, replacement }) => token[position] !== replacement);
    await fc.assert(
      fc.asyncProperty(tampering, async ({ position, replacement }) => {
        const tampered = `${token.slice(0, position)}${replacement}${token.slice(position + 1)}`;
        expectUnauthorized(await createWith(`Bearer ${tampered}`));
      }),
      { seed, numRuns: fuzzRuns },
    );
  }, 180_000);
});

describe('afterwards', () => {
  it('the table holds only the positive controls', async () => {
    expect(acknowledged.size).toBe(2);
    expect(
      auditStore(await scanStoredItems(table.documentClient, table.tableName), acknowledged),
    ).toEqual(cleanAudit);
  });

  it('the logs hold no token or Authorization header', () => {
    // The rejections are logged (with their reason), so there was something to leak.
    expect(
      api.outputLines.filter((line) => line.includes('Rejected the bearer token')).length,
    ).toBeGreaterThan(fuzzRuns);
    expect(findLogLeaks(api.outputLines, sentAuthorizations)).toEqual([]);
  });
});
