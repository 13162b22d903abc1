/** API Gateway's throttling: token buckets, per method and per client and method. */

/**
 * API Gateway's stage throttling: a bucket holding `burstLimit` tokens, refilled at `rateLimit`
 * per second; a request without a token is answered 429.
 */
export function createTokenBucket(
  { rateLimit, burstLimit }: { readonly rateLimit: number; readonly burstLimit: number },
  now: () => number = performance.now.bind(performance),
): () => boolean {
  let tokens = burstLimit;
  let refilledAt = now();
  return () => {
    const time = now();
    tokens = Math.min(burstLimit, tokens + ((time - refilledAt) / 1000) * rateLimit);
    refilledAt = time;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  };
}

/** Buckets made on first use, one per key (a method; a client's key and a method). */
export function keyedTokenBuckets<Key>(): (
  key: Key,
  limits: Parameters<typeof createTokenBucket>[0],
) => boolean {
  const buckets = new Map<Key, () => boolean>();
  return (key, limits) => {
    let bucket = buckets.get(key);
    if (bucket === undefined) {
      bucket = createTokenBucket(limits);
      buckets.set(key, bucket);
    }
    return bucket();
  };
}
