/**
 * `mnemonist/lru-cache` for the bundles: the DynamoDB client's endpoint-discovery cache, never
 * used here, brought ~6.4 KB; a Map keeps the same methods and eviction.
 */
export default class LruCache<Key, Value> {
  readonly #entries = new Map<Key, Value>();
  readonly #capacity: number;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  get size(): number {
    return this.#entries.size;
  }

  has(key: Key): boolean {
    return this.#entries.has(key);
  }

  /** The value without making it the most recently used. */
  peek(key: Key): Value | undefined {
    return this.#entries.get(key);
  }

  get(key: Key): Value | undefined {
    if (!this.#entries.has(key)) return undefined;
    const value = this.#entries.get(key) as Value;
    // A Map keeps insertion order: re-inserting makes the key the most recently used.
    this.#entries.delete(key);
    this.#entries.set(key, value);
    return value;
  }

  set(key: Key, value: Value): this {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.#capacity) {
      this.#entries.delete(this.#entries.keys().next().value as Key);
    }
    return this;
  }

  clear(): void {
    this.#entries.clear();
  }
}
