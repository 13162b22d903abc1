/**
 * Stage throttling, as API Gateway applies it before anything else of a request.
 */

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
