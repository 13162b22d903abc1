/**
 * `mnemonist/lru-cache` for the Lambda bundles (see `bundleSettings.alias`). The SDK's DynamoDB
 * client makes an endpoint-discovery cache (`@aws-sdk/endpoint-cache`) whether or not discovery
 * is on, and mnemonist's typed-array LRU brings ~6.4 KB of code into every bundle for it. The
 * Plant Store never turns endpoint discovery on, so the cache stays empty; this Map keeps the
 * same methods and least-recently-used eviction in a few lines, should it ever be used.
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
