/**
 * `node:http` for the Lambda bundles, loaded with `require` (see `bundleSettings.alias`).
 *
 * An ES module import of a Node built-in goes through an ESM facade that reads every export;
 * `node:http`'s exports include lazy getters that load undici (Node's fetch), which a cold start
 * pays for (what it costs: docs/performance.md). `require` returns the module without touching
 * them. middy imports `STATUS_CODES` from it; the SDK loads it when the store is plain
 * http (DynamoDB Local, `sam local`).
 */
import { createRequire } from 'node:module';

const http: typeof import('node:http') = createRequire(import.meta.url)('node:http');

export const { Agent, request, STATUS_CODES } = http;
export default http;
