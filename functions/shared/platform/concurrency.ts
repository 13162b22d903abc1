/** Bounded concurrency for a list of AWS calls. */

/** Runs `work` on every item, at most `limit` at a time, started in order; resolves when all end. */
export async function forEachConcurrently<Item>(
  items: readonly Item[],
  limit: number,
  work: (item: Item) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++] as Item);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
