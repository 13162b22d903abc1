/**
 * `npm start`'s webhook settings: `WEBHOOK_URL` (one or more, comma-separated) and
 * `WEBHOOK_SECRET` (`whsec_…`). Without a secret, one is made on first use and kept in the data
 * folder (0600), so receivers keep verifying across restarts.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import type { Subscriber } from '../functions/webhooks/send-webhook.ts';
import { ensurePrivateDirectory } from './private-directory.ts';

/** The local subscribers, and whether their secret was made just now (to print it once). */
export interface LocalWebhooks {
  readonly subscribers: readonly Subscriber[];
  readonly secretFile: string | undefined;
  readonly newSecret: string | undefined;
}

/**
 * Reads the settings.
 * @throws Error naming the variable when a URL or the secret cannot be used.
 */
export function readLocalWebhooks(
  environment: Record<string, string | undefined>,
  dataDirectory: string,
): LocalWebhooks {
  const urls = (environment.WEBHOOK_URL ?? '')
    .split(',')
    .map((url) => url.trim())
    .filter((url) => url !== '');
  for (const url of urls) {
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
      throw new Error(`WEBHOOK_URL must hold http(s) URLs separated by commas, got "${url}".`);
    }
  }
  if (urls.length === 0) return { subscribers: [], secretFile: undefined, newSecret: undefined };

  const given = environment.WEBHOOK_SECRET?.trim() || undefined;
  if (given !== undefined) {
    checkSecret(given);
    return { subscribers: subscribersOf(urls, given), secretFile: undefined, newSecret: undefined };
  }
  const directory = join(dataDirectory, 'webhooks');
  const secretFile = join(directory, 'secret');
  try {
    const kept = readFileSync(secretFile, 'utf8').trim();
    checkSecret(kept, secretFile);
    return { subscribers: subscribersOf(urls, kept), secretFile, newSecret: undefined };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  ensurePrivateDirectory(directory);
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  writeFileSync(secretFile, `${secret}\n`, { mode: 0o600 });
  return { subscribers: subscribersOf(urls, secret), secretFile, newSecret: secret };
}

function subscribersOf(urls: readonly string[], secret: string): Subscriber[] {
  return urls.map((url, index) => ({ name: `webhook-${index + 1}`, url, secret }));
}

function checkSecret(secret: string, source = 'WEBHOOK_SECRET'): void {
  let valid = secret.startsWith('whsec_');
  try {
    if (valid) new Webhook(secret);
  } catch {
    valid = false;
  }
  if (!valid) {
    throw new Error(`${source} must be a Standard Webhooks secret: whsec_ and base64.`);
  }
}
