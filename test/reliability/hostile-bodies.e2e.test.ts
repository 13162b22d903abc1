/**
 * Hostile bodies never produce a 5xx, an answer outside the contract's shapes, or a stored item
 * the client was not told about: fuzzed bodies (fast-check, fixed seed) over HTTP to the local
 * API, each built with what the contract says it means, an oracle that shares no code with the
 * API; then the table is audited.
 *
 * @services dynamodb-local
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { errorCodes, maxBodyBytes } from '../../functions/shared/errors/error-codes.ts';
import { int64Max, int64Min } from '../../functions/shared/http/int64-json.ts';
import { describeAudit, seed, uniquePlant, useHostileSession } from './hostile-session.ts';
import { errorCodeOf, expectContractShape, postPlant } from './plant-client.ts';
import type { ExpectedPlant } from './stored-plants.ts';

const runs = { plants: 400, garbage: 200, truncated: 100, nesting: 60 };

const session = useHostileSession();

// ---------------------------------------------------------------------------------------------
// The oracle: JSON text paired with what the contract says it means

/** A JSON value's text and its meaning for one field: `undefined` when the field rejects it. */
interface FieldCase<Value> {
  readonly text: string;
  readonly value: Value | undefined;
}

const inInt64 = (value: bigint) => value >= int64Min && value <= int64Max;
const int64 = fc.bigInt({ min: int64Min, max: int64Max });

/** Ids in every spelling JSON Schema calls an integer, and numbers and non-numbers it does not. */
const idCase: fc.Arbitrary<FieldCase<bigint>> = fc.oneof(
  int64.map((value) => ({ text: String(value), value })),
  fc.constantFrom(int64Min, int64Max, 0n, -1n, 2n ** 53n + 1n).map((value) => ({
    text: String(value),
    value,
  })),
  fc
    .tuple(int64, fc.integer({ min: 1, max: 4 }))
    .map(([value, zeros]) => ({ text: `${value}.${'0'.repeat(zeros)}`, value })),
  fc
    .tuple(
      fc.bigInt({ min: -999n, max: 999n }),
      fc.integer({ min: 0, max: 20 }),
      fc.constantFrom('e', 'E', 'e+'),
    )
    .map(([mantissa, exponent, marker]) => {
      const value = mantissa * 10n ** BigInt(exponent);
      return { text: `${mantissa}${marker}${exponent}`, value: inInt64(value) ? value : undefined };
    }),
  fc
    .tuple(int64, fc.integer({ min: 1, max: 3 }))
    .map(([value, digits]) => ({ text: `${value}${'0'.repeat(digits)}e-${digits}`, value })),
  fc
    .oneof(
      fc.bigInt({ min: int64Max + 1n, max: 2n ** 80n }),
      fc.bigInt({ min: -(2n ** 80n), max: int64Min - 1n }),
    )
    .map((value) => ({ text: String(value), value: undefined })),
  fc
    .integer({ min: 20, max: 3_000 })
    .map((digits) => ({ text: '9'.repeat(digits), value: undefined })),
  fc.constantFrom(
    { text: '-0', value: 0n },
    { text: '0e99999', value: 0n },
    { text: '-0.0', value: 0n },
    { text: '1e400', value: undefined },
    { text: '-1e999999999', value: undefined },
    { text: '0.5', value: undefined },
    { text: '-1e-400', value: undefined },
    { text: '1.5e0', value: undefined },
    { text: '"7"', value: undefined },
    { text: 'true', value: undefined },
    { text: 'null', value: undefined },
    { text: '[7]', value: undefined },
    { text: '{"value":7}', value: undefined },
  ),
);

/** Odd text: control characters, lone surrogates, combining marks, bidi overrides, astral. */
const oddStrings = fc.constantFrom(
  '',
  '\u0000',
  '\ud800',
  'a\udfffb',
  'e\u0301',
  '\u202eevil',
  '\ufeff',
  '🌿🪴',
  '"quoted"\\',
  '__proto__',
  '</script>',
);

const stringCase: fc.Arbitrary<FieldCase<string>> = fc.oneof(
  fc
    .string({ unit: 'binary', maxLength: 40 })
    .map((value) => ({ text: JSON.stringify(value), value })),
  oddStrings.map((value) => ({ text: JSON.stringify(value), value })),
  fc.constantFrom(
    { text: '"\\u0041\\u00e9"', value: 'Aé' },
    { text: 'null', value: undefined },
    { text: '42', value: undefined },
    { text: 'false', value: undefined },
    { text: '["Fern"]', value: undefined },
    { text: '{"name":"Fern"}', value: undefined },
  ),
);

/** Fields the contract does not declare, prototype keys first among them. */
const extraKey = fc.oneof(
  fc.constantFrom(
    '__proto__',
    'constructor',
    'prototype',
    'toString',
    'hasOwnProperty',
    'Id',
    'NAME',
  ),
  fc.string({ maxLength: 12 }).filter((key) => !['id', 'name', 'tag'].includes(key)),
);

interface PlantCase {
  readonly body: string;
  /** The plant the body means, or `undefined` when it is not a valid NewPlant. */
  readonly plant: (ExpectedPlant & { readonly id: bigint }) | undefined;
}

const plantCase: fc.Arbitrary<PlantCase> = fc
  .record({
    id: fc.option(idCase, { freq: 8 }),
    name: fc.option(stringCase, { freq: 8 }),
    tag: fc.option(stringCase, { freq: 2 }),
    extras: fc.array(fc.tuple(extraKey, fc.jsonValue({ maxDepth: 3 })), { maxLength: 4 }),
    // A declared key written twice: JSON.parse keeps the last one, and so must the API.
    shadows: fc.array(fc.tuple(fc.constantFrom('id', 'name', 'tag'), idCase), { maxLength: 2 }),
    order: fc.array(fc.nat(), { minLength: 8, maxLength: 8 }),
  })
  .map(({ id, name, tag, extras, shadows, order }) => {
    const entries: string[] = extras.map(
      ([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`,
    );
    if (id !== null) entries.push(`"id":${id.text}`);
    if (name !== null) entries.push(`"name":${name.text}`);
    if (tag !== null) entries.push(`"tag":${tag.text}`);
    const shuffled = entries
      .map((entry, index) => ({ entry, rank: order[index % order.length] ?? 0 }))
      .sort((a, b) => a.rank - b.rank)
      .map(({ entry }) => entry);
    // Only keys that are also written for real, so the real one (the last) is what counts.
    const present = { id: id !== null, name: name !== null, tag: tag !== null };
    const shadowed = shadows
      .filter(([key]) => present[key])
      .map(([key, value]) => `"${key}":${value.text}`);
    const body = `{${[...shadowed, ...shuffled].join(',')}}`;
    const valid =
      id?.value !== undefined &&
      name?.value !== undefined &&
      (tag === null || tag.value !== undefined);
    const plant = valid
      ? {
          id: id.value as bigint,
          name: name.value as string,
          ...(tag === null ? {} : { tag: tag.value as string }),
        }
      : undefined;
    return { body, plant };
  });

const samePlant = (a: ExpectedPlant, b: ExpectedPlant) => a.name === b.name && a.tag === b.tag;

/** Sends a plant case and checks the answer against the oracle and what was acknowledged before. */
async function checkPlantCase({ body, plant }: PlantCase): Promise<void> {
  session.countCase();
  session.sent.push(body);
  const answer = await postPlant(session.api.url, body, { token: session.token });
  expectContractShape(answer);
  if (Buffer.byteLength(body) > maxBodyBytes) {
    expect([answer.status, errorCodeOf(answer)]).toEqual([400, errorCodes.bodyTooLarge.error]);
    return;
  }
  if (plant === undefined) {
    expect([answer.status, errorCodeOf(answer)]).toEqual([400, errorCodes.invalidPlant.error]);
    return;
  }
  const expected =
    plant.tag === undefined ? { name: plant.name } : { name: plant.name, tag: plant.tag };
  const before = session.acknowledged.get(String(plant.id));
  if (before !== undefined && !samePlant(before, expected)) {
    expect([answer.status, errorCodeOf(answer)]).toEqual([400, errorCodes.plantConflict.error]);
    return;
  }
  expect({ status: answer.status, body: answer.body }).toEqual({ status: 200, body: expected });
  session.acknowledged.set(String(plant.id), expected);
}

describe('fuzzed bodies', () => {
  it(`answer plant-shaped bodies as the contract says (${runs.plants} cases: int64 spellings, wrong types, odd unicode, prototype keys, repeated keys)`, async () => {
    await fc.assert(fc.asyncProperty(plantCase, checkPlantCase), { seed, numRuns: runs.plants });
  }, 120_000);

  it(`answer arbitrary text, bytes and JSON with 400/40001 or 40002 (${runs.garbage} cases)`, async () => {
    const garbage = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 200 }),
      fc.jsonValue().map((value) => JSON.stringify(value)),
      fc.uint8Array({ maxLength: 200 }),
    );
    await fc.assert(
      fc.asyncProperty(garbage, async (body) => {
        session.countCase();
        if (typeof body === 'string') session.sent.push(body);
        const answer = await postPlant(session.api.url, body, { token: session.token });
        expectContractShape(answer);
        expect(answer.status).toBe(400);
        expect([errorCodes.invalidJson.error, errorCodes.invalidPlant.error]).toContain(
          errorCodeOf(answer),
        );
      }),
      { seed, numRuns: runs.garbage },
    );
  }, 120_000);

  it(`answer every cut-short valid body with 400/40001 (${runs.truncated} cases)`, async () => {
    const whole = '{"id":9223372036854775807,"name":"Truncated fern","tag":"cut"}';
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: whole.length - 1 }), async (length) => {
        session.countCase();
        const answer = await postPlant(session.api.url, whole.slice(0, length), {
          token: session.token,
        });
        expectContractShape(answer);
        expect([answer.status, errorCodeOf(answer)]).toEqual([400, errorCodes.invalidJson.error]);
      }),
      { seed, numRuns: runs.truncated },
    );
  }, 180_000);

  it(`answer deep nesting, as the body or inside an ignored field, without a 5xx (${runs.nesting} cases)`, async () => {
    const nesting = fc.record({
      depth: fc.integer({ min: 1, max: 12_000 }),
      opener: fc.constantFrom('[', '{"a":'),
      inside: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(nesting, async ({ depth, opener, inside }) => {
        const closer = opener === '[' ? ']' : '}';
        const nested = `${opener.repeat(depth)}1${closer.repeat(depth)}`;
        const { id } = uniquePlant();
        const name = `Nested ${id}`;
        const body = inside ? `{"id":${id},"name":"${name}","nested":${nested}}` : nested;
        // Any depth a 16 KiB body allows is answered exactly as the contract says.
        await checkPlantCase({ body, plant: inside ? { id, name } : undefined });
      }),
      { seed, numRuns: runs.nesting },
    );
  }, 120_000);

  it('answer bodies at and over the size limits with 200, then 400/40004', async () => {
    const { id } = uniquePlant();
    const prefix = `{"id":${id},"name":"`;
    const atLimit = `${prefix}${'x'.repeat(maxBodyBytes - prefix.length - 2)}"}`;
    expect(Buffer.byteLength(atLimit)).toBe(maxBodyBytes);
    await checkPlantCase({ body: atLimit, plant: { id, name: JSON.parse(atLimit).name } });
    const { id: otherId } = uniquePlant();
    const overLimit = `{"id":${otherId},"name":"${'x'.repeat(maxBodyBytes)}"}`;
    await checkPlantCase({
      body: overLimit,
      plant: { id: otherId, name: 'x'.repeat(maxBodyBytes) },
    });
    // Past Lambda's 6 MB and API Gateway's 10 MB: AWS answers its own 413, which no gateway
    // response reshapes (docs/api.md, Limits); the local stand-in sends the same.
    const large = await postPlant(
      session.api.url,
      `{"id":1,"name":"${'x'.repeat(5 * 1024 * 1024)}"}`,
      {
        token: session.token,
      },
    );
    const huge = await postPlant(
      session.api.url,
      `{"id":1,"name":"${'x'.repeat(11 * 1024 * 1024)}"}`,
      {
        token: session.token,
      },
    );
    session.countCase(2);
    expect([large.status, large.text]).toEqual([413, `{"message": "Request Too Long"}`]);
    expect([huge.status, huge.text]).toEqual([413, 'HTTP content length exceeded 10485760 bytes.']);
  }, 180_000);
});

describeAudit(session, 100);
