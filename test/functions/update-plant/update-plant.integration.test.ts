/**
 * The conditional write on its own, against DynamoDB Local: where the new version comes from,
 * plants written before versions existed, and If-Match lists.
 *
 * @services dynamodb-local
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { errorCodes } from '../../../functions/shared/errors/error-codes.ts';
import { PlantNotFoundError } from '../../../functions/shared/errors/errors.ts';
import { maxVersion } from '../../../functions/shared/http/entity-version.ts';
import { updatePlant } from '../../../functions/update-plant/update-plant.ts';
import { createTestTable, type TestTable } from '../../support/test-store.ts';

/** What a change whose If-Match names none of the plant's versions is refused with. */
const preconditionFailed = { code: errorCodes.preconditionFailed };

let table: TestTable;
let nextId = 1n;
const clock = 1_795_000_000_000;

beforeAll(async () => {
  table = await createTestTable();
});

afterAll(async () => {
  await table?.remove();
});

/** Stores an item as given (another version of the API, or another tool, may have written it). */
async function store(item: Record<string, unknown>): Promise<bigint> {
  nextId += 1n;
  await table.documentClient.send(
    new PutCommand({ TableName: table.tableName, Item: { id: nextId, ...item } }),
  );
  return nextId;
}

const dependencies = (now = clock) => ({ ...table, now: () => now });

async function storedVersion(id: bigint): Promise<string | undefined> {
  const item = await table.getItem(id);
  return item?.version === undefined ? undefined : String(item.version);
}

describe('updatePlant', () => {
  it('takes the new version from the clock or the stored one, never from If-Match', async () => {
    const id = await store({ name: 'Fern', version: clock - 10 });
    // A list naming the stored version and a huge one: the huge one sets nothing.
    const changed = await updatePlant(
      id,
      { name: 'Moss' },
      { ifMatch: [clock - 10, 9_007_199_254_740_990] },
      dependencies(),
    );
    expect(changed).toEqual({ plant: { id, name: 'Moss' }, version: clock });
    expect(await storedVersion(id)).toBe(String(clock));
    // The single ETag of the stored version: the next version after it.
    const again = await updatePlant(
      id,
      { tag: 'x' },
      { ifMatch: [clock] },
      dependencies(clock - 5),
    );
    expect(again.version).toBe(clock + 1);
  });

  it('changes a plant stored before versions existed through If-Match "0" or *', async () => {
    const id = await store({ name: 'Old' });
    expect(await storedVersion(id)).toBeUndefined();
    await expect(
      updatePlant(id, { name: 'New' }, { ifMatch: [5] }, dependencies()),
    ).rejects.toMatchObject(preconditionFailed);
    expect(await updatePlant(id, { name: 'New' }, { ifMatch: [0] }, dependencies())).toEqual({
      plant: { id, name: 'New' },
      version: clock,
    });
    const literalZero = await store({ name: 'Zero', version: 0 });
    expect(
      (await updatePlant(literalZero, { tag: 't' }, { ifMatch: [0] }, dependencies())).version,
    ).toBe(clock);
    const anyOld = await store({ name: 'Any' });
    expect(
      (await updatePlant(anyOld, { tag: 't' }, { ifMatch: 'any' }, dependencies())).version,
    ).toBe(clock);
  });

  it('with *, pins a stored version at or past the clock and writes the one after it', async () => {
    const id = await store({ name: 'Ahead', version: clock + 100 });
    expect(await updatePlant(id, { name: 'Behind' }, { ifMatch: 'any' }, dependencies())).toEqual({
      plant: { id, name: 'Behind' },
      version: clock + 101,
    });
  });

  it('reads a list of ETags against the stored version: 200, 412 or 404', async () => {
    const id = await store({ name: 'Listed', version: 42 });
    await expect(
      updatePlant(id, { name: 'x' }, { ifMatch: [1, 2, 3] }, dependencies()),
    ).rejects.toMatchObject(preconditionFailed);
    expect(
      (await updatePlant(id, { name: 'x' }, { ifMatch: [1, 42, 3] }, dependencies())).version,
    ).toBe(clock);
    await expect(
      updatePlant(999_999n, { name: 'x' }, { ifMatch: [1, 2] }, dependencies()),
    ).rejects.toThrow(PlantNotFoundError);
    // No ETag that could match (only weak or foreign ones): 412 for a plant, 404 for none.
    await expect(
      updatePlant(id, { name: 'y' }, { ifMatch: [] }, dependencies()),
    ).rejects.toMatchObject(preconditionFailed);
    await expect(
      updatePlant(999_999n, { name: 'y' }, { ifMatch: [] }, dependencies()),
    ).rejects.toThrow(PlantNotFoundError);
  });

  it('changes no item whose tag or version has another type, or whose version is negative: 404, as a read says', async () => {
    const notPlants = [
      { name: 'Numbered tag', tag: 5, version: 10 },
      { name: 'Text version', version: '10' },
      { name: 'Negative version', version: -3 },
    ];
    for (const item of notPlants) {
      const id = await store(item);
      for (const expected of ['any', [10], [10, 11]] as const) {
        await expect(
          updatePlant(id, { name: 'Changed' }, { ifMatch: expected }, dependencies()),
        ).rejects.toThrow(PlantNotFoundError);
      }
      expect(await table.getItem(id)).toEqual(expect.objectContaining({ name: item.name }));
    }
  });

  it('never writes a version past the highest (2^53 − 2), so every ETag stays exact: 404 at the top', async () => {
    const belowTop = await store({ name: 'Near', version: maxVersion - 1 });
    expect(
      (await updatePlant(belowTop, { tag: 'a' }, { ifMatch: 'any' }, dependencies())).version,
    ).toBe(maxVersion);
    for (const expected of ['any', [maxVersion], [1, maxVersion]] as const) {
      await expect(
        updatePlant(belowTop, { tag: 'b' }, { ifMatch: expected }, dependencies()),
      ).rejects.toThrow(PlantNotFoundError);
    }
    // The highest version named alone is read first: 412 for a plant at another version.
    const lower = await store({ name: 'Lower', version: 42 });
    await expect(
      updatePlant(lower, { tag: 'b' }, { ifMatch: [maxVersion] }, dependencies()),
    ).rejects.toMatchObject(preconditionFailed);
    const past = await store({ name: 'Past', version: maxVersion + 1 });
    await expect(
      updatePlant(past, { tag: 'b' }, { ifMatch: 'any' }, dependencies()),
    ).rejects.toThrow(PlantNotFoundError);
    expect(await storedVersion(belowTop)).toBe(String(maxVersion));
    expect(await storedVersion(past)).toBe(String(maxVersion + 1));
  });

  it('writes a whole version over a fractional one with * (no condition can tell them apart)', async () => {
    const id = await store({ name: 'Fraction', version: 1.5 });
    expect(
      (await updatePlant(id, { name: 'Whole' }, { ifMatch: 'any' }, dependencies())).version,
    ).toBe(clock);
    await expect(
      updatePlant(id, { name: 'x' }, { ifMatch: [1] }, dependencies()),
    ).rejects.toMatchObject(preconditionFailed);
  });

  it('writes nothing when nothing changes, whatever the If-Match form', async () => {
    const id = await store({ name: 'Same', tag: 't', version: 7 });
    for (const expected of [[7], [1, 7], 'any'] as const) {
      expect(
        await updatePlant(id, { name: 'Same', tag: 't' }, { ifMatch: expected }, dependencies()),
      ).toEqual({
        plant: { id, name: 'Same', tag: 't' },
        version: 7,
      });
    }
    expect(await updatePlant(id, {}, { ifMatch: [7] }, dependencies())).toMatchObject({
      version: 7,
    });
    expect(await storedVersion(id)).toBe('7');
  });
});
