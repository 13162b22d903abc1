/**
 * The local data folder holds the development issuer's private key and every plant stored
 * locally: it is the user's alone, like `~/.ssh`.
 */
import { chmodSync, mkdirSync } from 'node:fs';

/**
 * Creates `directory` (and missing parents) readable by the user only (0700), and narrows it to
 * 0700 when an earlier version left it wider.
 */
export function ensurePrivateDirectory(directory: string): void {
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  chmodSync(directory, 0o700);
}
