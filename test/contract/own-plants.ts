/**
 * The plants a contract run made, so that it deletes those and nothing else, on any stage: a
 * plant is the run's once its create answered 200 to an id no plant had just before, and it is
 * deleted with `If-Match` of the last ETag the run saw, so one that someone changed meanwhile is
 * left as it is.
 */
import { randomInt } from 'node:crypto';
import { type Answer, call } from './target.ts';

/** Whether a plant has `id` on the target (as `reader` sees it). */
export async function plantExists(id: bigint, reader: string): Promise<boolean> {
  const answer = await call('GET', `/plants/${id}`, { token: reader });
  if (answer.status !== 200 && answer.status !== 404) {
    throw new Error(`GET /plants/${id} answered ${answer.status}: ${answer.text}`);
  }
  return answer.status === 200;
}

/**
 * A run's first read, tried again twice, 3 s apart, while it answers 401 to the valid `reader`:
 * a cold authorizer whose issuer is slow to give its keys (an emulator under load: two tries of
 * 1.5 s) fails closed by design (docs/deploying.md, `Authorizer-Failures`), and a warm one then
 * has them. Any later 401 fails the run.
 */
async function firstRead(id: bigint, reader: string): Promise<boolean> {
  for (let tries = 1; ; tries += 1) {
    try {
      return await plantExists(id, reader);
    } catch (error) {
      if (tries === 3 || !String(error).includes('answered 401')) throw error;
      await new Promise((resolve) => setTimeout(resolve, 3_000));
    }
  }
}

/** Why a case needing `id` cannot run, when another's plant has it. */
export async function takenReason(id: bigint, reader: string): Promise<string | undefined> {
  return (await plantExists(id, reader))
    ? `a plant the suite did not create has id ${id}, and the suite deletes only its own`
    : undefined;
}

/**
 * `count` ids from a random base far from any a person would use, none of them taken: a base
 * with a taken id is drawn again.
 */
export async function freeIds(
  floor: bigint,
  count: number,
  reader: string,
): Promise<readonly bigint[]> {
  for (;;) {
    const base = floor + BigInt(randomInt(0, 2 ** 47)) * 1000n;
    const ids = Array.from({ length: count }, (_, index) => base + BigInt(index));
    // The first alone: on a stage just deployed, it waits for a cold authorizer's key fetch, and
    // the rest find it warm (and its answer cached) rather than each starting one under load.
    const first = await firstRead(ids[0] as bigint, reader);
    const taken = [
      first,
      ...(await Promise.all(ids.slice(1).map((id) => plantExists(id, reader)))),
    ];
    if (!taken.includes(true)) return ids;
  }
}

/** The run's own plants, with the ETag each was last seen with and the name it was made with. */
export class OwnPlants {
  readonly #etags = new Map<bigint, string | undefined>();
  readonly #names = new Map<bigint, unknown>();

  /**
   * Creates a plant under `id` with the JSON `body` (the id written in exactly); it is the run's
   * when it is answered 200 and no plant had `id` before.
   */
  async create(id: bigint, body: Record<string, unknown>, writer: string): Promise<Answer> {
    const owned = this.#etags.has(id);
    const free = owned || !(await plantExists(id, writer));
    const answer = await call('POST', '/plants', {
      token: writer,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ ...body, id: '§' }).replace('"§"', String(id)),
    });
    if (free && answer.status === 200) {
      this.#etags.set(id, answer.headers.etag);
      this.#names.set(id, body.name);
    }
    return answer;
  }

  /** The run changed its plant `id`: this is its ETag now (none: the change did not happen). */
  changed(id: bigint, etag: string | undefined): void {
    if (etag !== undefined && this.#etags.has(id)) this.#etags.set(id, etag);
  }

  /** The run deleted its plant `id` itself. */
  deleted(id: bigint): void {
    this.#etags.delete(id);
  }

  /**
   * Deletes every plant of the run's that is as the run left it, always with `If-Match`: where no
   * ETag was seen, the one of the plant read now, if it still has the run's name.
   */
  async removeAll(writer: string): Promise<void> {
    for (const [id, seen] of this.#etags) {
      let etag = seen;
      if (etag === undefined) {
        const read = await call('GET', `/plants/${id}`, { token: writer });
        const name =
          read.status === 200 ? (JSON.parse(read.text) as { name?: unknown }).name : undefined;
        if (name !== this.#names.get(id)) continue;
        etag = read.headers.etag;
      }
      if (etag === undefined) continue;
      await call('DELETE', `/plants/${id}`, { token: writer, headers: { 'If-Match': etag } });
    }
    this.#etags.clear();
    this.#names.clear();
  }
}
