/**
 * `node:http` for the bundles, by `require`: the ESM facade reads every export, and lazy getters
 * load undici at each cold start (docs/performance.md). middy and the SDK (plain http) use it.
 */
import { createRequire } from 'node:module';

const http: typeof import('node:http') = createRequire(import.meta.url)('node:http');

export const { Agent, request, STATUS_CODES } = http;
export default http;
