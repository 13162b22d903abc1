/**
 * `npm start`'s webhook settings: `WEBHOOK_URL` (one or more, comma-separated),
 * `WEBHOOK_SECRET` (`whsec_…`), `WEBHOOK_FORMAT` (`plant`, the default, or `event`) and
 * `WEBHOOK_EVENTS` (comma-separated types; by default `plant.created` in the plant format, every
 * type in the event format), the same for every URL. Without a secret, one is made on first use
 * and kept in the data folder (0600), so receivers keep verifying across restarts.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import {
  commaList,
  parsed,
  readConfiguration,
} from '../functions/shared/platform/configuration.ts';
import {
  type PlantEventType,
  subscriptionOf,
  type WebhookFormat,
  webhookFormats,
} from '../functions/shared/webhooks/plant-events.ts';
import type { LocalSubscriber } from './local-webhooks.ts';
import { ensurePrivateDirectory } from './private-directory.ts';

/** The local subscribers, and whether their secret was made just now (to print it once). */
export interface LocalWebhooks {
  readonly subscribers: readonly LocalSubscriber[];
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
  const variables = readConfiguration('npm start', webhookVariables, environment, {
    secrets: ['WEBHOOK_SECRET'],
    createError: (problems) => new Error(problems.join(' ')),
  });
  return resolveLocalWebhooks(webhookSettingsOf(variables), dataDirectory);
}

/** The variables (npm start reads them with its others). */
export const webhookVariables = {
  WEBHOOK_URL: parsed(parseUrls, { fallback: [] as string[] }),
  WEBHOOK_SECRET: parsed(parseSecret, { fallback: '' }),
  WEBHOOK_FORMAT: parsed(parseFormat, { fallback: 'plant' as WebhookFormat }),
  // None listed: the format's default.
  WEBHOOK_EVENTS: parsed(parseList, { fallback: [] as ReturnType<typeof parseList> }),
};

/** The settings of variables read with {@link webhookVariables}. */
export function webhookSettingsOf(variables: {
  readonly WEBHOOK_URL: string[];
  readonly WEBHOOK_SECRET: string;
  readonly WEBHOOK_FORMAT: WebhookFormat;
  readonly WEBHOOK_EVENTS: ReturnType<typeof parseList>;
}) {
  return {
    urls: variables.WEBHOOK_URL,
    given: variables.WEBHOOK_SECRET,
    format: variables.WEBHOOK_FORMAT,
    events: variables.WEBHOOK_EVENTS,
  };
}

/** The subscribers of checked settings, with the secret kept in the data folder when none is given. */
export function resolveLocalWebhooks(
  settings: ReturnType<typeof webhookSettingsOf>,
  dataDirectory: string,
): LocalWebhooks {
  const { urls, given, format } = settings;
  const chosen = { format, ...(settings.events.length === 0 ? {} : { events: settings.events }) };
  // Checked now, so that a wrong type or format fails the start with the variables' names.
  try {
    subscriptionOf('WEBHOOK_URL', chosen);
  } catch (error) {
    throw new Error(
      `WEBHOOK_FORMAT and WEBHOOK_EVENTS: ${(error as Error).message.replace(/^Webhook subscriber WEBHOOK_URL: /, '')}`,
    );
  }
  const subscribersOf = (secret: string): LocalSubscriber[] =>
    urls.map((url, index) => ({
      name: `webhook-${index + 1}`,
      url,
      secret,
      ...chosen,
    }));
  if (urls.length === 0) return { subscribers: [], secretFile: undefined, newSecret: undefined };
  if (given !== '') {
    return { subscribers: subscribersOf(given), secretFile: undefined, newSecret: undefined };
  }
  const directory = join(dataDirectory, 'webhooks');
  const secretFile = join(directory, 'secret');
  try {
    const kept = readFileSync(secretFile, 'utf8').trim();
    try {
      parseSecret(kept);
    } catch (error) {
      throw new Error(`${secretFile} ${(error as Error).message}.`);
    }
    return { subscribers: subscribersOf(kept), secretFile, newSecret: undefined };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  ensurePrivateDirectory(directory);
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  writeFileSync(secretFile, `${secret}\n`, { mode: 0o600 });
  return { subscribers: subscribersOf(secret), secretFile, newSecret: secret };
}

/** `WEBHOOK_URL`: http(s) URLs separated by commas. */
function parseUrls(text: string): string[] {
  const urls = commaList(text);
  for (const url of urls) {
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
      throw new Error('must hold http(s) URLs separated by commas');
    }
  }
  return urls;
}

/** `WEBHOOK_FORMAT`: one of {@link webhookFormats}. */
function parseFormat(text: string): WebhookFormat {
  const format = webhookFormats.find((name) => name === text.trim());
  if (format === undefined) throw new Error(`must be ${webhookFormats.join(' or ')}`);
  return format;
}

/** `WEBHOOK_EVENTS`: names separated by commas (each checked with the format). */
function parseList(text: string): PlantEventType[] {
  return commaList(text) as PlantEventType[];
}

/** A Standard Webhooks secret: `whsec_` and base64 (never shown back: it is a secret). */
function parseSecret(text: string): string {
  const secret = text.trim();
  let valid = secret.startsWith('whsec_');
  try {
    if (valid) new Webhook(secret);
  } catch {
    valid = false;
  }
  if (!valid) throw new Error('must be a Standard Webhooks secret: whsec_ and base64');
  return secret;
}
