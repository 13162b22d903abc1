/**
 * Per-function sizing: the ONE place to change memory and timeouts (the benchmark tunes the
 * memory here). Entry paths are relative to the repository root.
 *
 * Plain data (no aws-cdk-lib) so that the benchmark can import it.
 */

/** What the stack needs to know about one function. */
export interface FunctionSettings {
  /** Handler module, relative to the repository root; it exports `handler`. */
  readonly entry: string;
  /**
   * Lambda memory in MB. CPU scales with it (1769 MB = one vCPU), so it sets cold-start time
   * and JSON/crypto speed too. 128 MB makes a bundled-SDK cold start several times slower.
   */
  readonly memorySizeMb: number;
  readonly timeoutSeconds: number;
}

export const functionSettings = {
  createPlant: {
    entry: 'functions/create-plant/handler.ts',
    // Starting point until measured: 1024 MB gives ~0.6 vCPU, which keeps the cold start of an
    // ESM bundle with the DynamoDB client well under a second at a low price per request.
    memorySizeMb: 1024,
    // The DynamoDB client gives up after ~3 s by design (then 503/50300); 10 s leaves room for
    // a cold start and its retries while staying well under API Gateway's 29 s.
    timeoutSeconds: 10,
  },
  authorizer: {
    entry: 'functions/authorizer/handler.ts',
    // Same reasoning: signature checks are CPU-bound and its result is cached for 300 s, so it
    // runs rarely; a fast cold start matters more than its price.
    memorySizeMb: 1024,
    // A JWKS fetch (the only network call) plus a signature check; a hung fetch must fail fast.
    timeoutSeconds: 5,
  },
} as const satisfies Record<string, FunctionSettings>;
