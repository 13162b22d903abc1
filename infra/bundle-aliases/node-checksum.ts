/**
 * `@smithy/core/checksum` for the bundles: SHA-256 (and its HMAC) from Node's own crypto, without
 * the SDK's pure-JavaScript fallback (~3.7 KiB); the rest (SQS's MD5, S3's CRC32) is the SDK's.
 */
import { createHash, createHmac } from 'node:crypto';

// @ts-expect-error: the SDK's own file, which `@smithy/core/checksum` types (its .d.ts sits apart).
export * from '../../node_modules/@smithy/core/dist-es/submodules/checksum/index.js';

type Data = string | ArrayBuffer | NodeJS.ArrayBufferView;
const bytes = (data: Data) => (data instanceof ArrayBuffer ? new Uint8Array(data) : data);

export class Sha256 {
  readonly #hash;
  constructor(key?: Data) {
    this.#hash = key === undefined ? createHash('sha256') : createHmac('sha256', bytes(key));
  }
  update(data: Data): void {
    this.#hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.#hash.digest());
  }
}
