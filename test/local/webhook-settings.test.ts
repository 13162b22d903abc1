import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { readLocalWebhooks } from '../../local/webhook-settings.ts';

const directories: string[] = [];

function dataDirectory(): string {
  const directory = mkdtempSync(join(tmpdir(), 'plant-store-webhook-settings-'));
  directories.push(directory);
  return directory;
}

afterEach(() => {
  for (const directory of directories.splice(0))
    rmSync(directory, { recursive: true, force: true });
});

describe('the local webhook settings', () => {
  it('sends nothing without WEBHOOK_URL, and makes no secret', () => {
    const data = dataDirectory();
    expect(readLocalWebhooks({}, data)).toEqual({
      subscribers: [],
      secretFile: undefined,
      newSecret: undefined,
    });
    expect(() => statSync(join(data, 'webhooks'))).toThrow();
  });

  it('takes comma-separated URLs and WEBHOOK_SECRET', () => {
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    const settings = readLocalWebhooks(
      { WEBHOOK_URL: 'http://127.0.0.1:4000/a, https://hooks.example/b', WEBHOOK_SECRET: secret },
      dataDirectory(),
    );
    expect(settings.subscribers).toEqual([
      { name: 'webhook-1', url: 'http://127.0.0.1:4000/a', secret, format: 'plant' },
      { name: 'webhook-2', url: 'https://hooks.example/b', secret, format: 'plant' },
    ]);
    expect(settings.newSecret).toBeUndefined();
  });

  it('makes a secret once, keeps it private in the data folder and reuses it', () => {
    const data = dataDirectory();
    const first = readLocalWebhooks({ WEBHOOK_URL: 'http://127.0.0.1:4000/' }, data);
    expect(first.newSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(() => new Webhook(first.newSecret as string)).not.toThrow();
    const file = join(data, 'webhooks', 'secret');
    expect(first.secretFile).toBe(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(data, 'webhooks')).mode & 0o777).toBe(0o700);
    expect(readFileSync(file, 'utf8')).toBe(`${first.newSecret}\n`);

    const second = readLocalWebhooks({ WEBHOOK_URL: 'http://127.0.0.1:4000/' }, data);
    expect(second.newSecret).toBeUndefined();
    expect(second.subscribers[0]?.secret).toBe(first.newSecret);
  });

  it.each([
    [{ WEBHOOK_URL: 'ftp://example.com/' }, 'WEBHOOK_URL must hold http(s) URLs'],
    [{ WEBHOOK_URL: 'not a url' }, 'WEBHOOK_URL must hold http(s) URLs'],
    [{ WEBHOOK_URL: 'http://127.0.0.1/', WEBHOOK_SECRET: 'hunter2' }, 'WEBHOOK_SECRET must be'],
    [{ WEBHOOK_URL: 'http://127.0.0.1/', WEBHOOK_SECRET: 'whsec_!!!' }, 'WEBHOOK_SECRET must be'],
  ])('refuses %j, naming the variable', (environment, message) => {
    expect(() => readLocalWebhooks(environment, dataDirectory())).toThrow(message);
  });

  it('never shows a refused secret back', () => {
    const refuse = () =>
      readLocalWebhooks(
        { WEBHOOK_URL: 'http://127.0.0.1/', WEBHOOK_SECRET: 'hunter2' },
        dataDirectory(),
      );
    expect(refuse).toThrow('WEBHOOK_SECRET must be a Standard Webhooks secret');
    expect(refuse).not.toThrow('hunter2');
  });

  it('takes WEBHOOK_FORMAT and WEBHOOK_EVENTS for every URL', () => {
    const read = (environment: Record<string, string>) =>
      readLocalWebhooks({ WEBHOOK_URL: 'http://127.0.0.1:4000/', ...environment }, dataDirectory())
        .subscribers[0];
    expect(read({ WEBHOOK_FORMAT: 'event' })).toMatchObject({ format: 'event' });
    expect(
      read({ WEBHOOK_FORMAT: 'event', WEBHOOK_EVENTS: 'plant.updated, plant.deleted' }),
    ).toMatchObject({
      format: 'event',
      events: ['plant.updated', 'plant.deleted'],
    });
    expect(read({ WEBHOOK_EVENTS: 'plant.created' })).toMatchObject({
      format: 'plant',
      events: ['plant.created'],
    });
  });

  it.each([
    [{ WEBHOOK_FORMAT: 'xml' }, 'WEBHOOK_FORMAT must be plant or event, got "xml".'],
    [
      { WEBHOOK_EVENTS: 'plant.updated' },
      'WEBHOOK_FORMAT and WEBHOOK_EVENTS: the plant format carries plant.created only; use the event format for plant.updated.',
    ],
    [
      { WEBHOOK_FORMAT: 'event', WEBHOOK_EVENTS: 'plant.moved' },
      'WEBHOOK_FORMAT and WEBHOOK_EVENTS: events must be among plant.created, plant.updated, plant.deleted, got "plant.moved".',
    ],
  ])('refuses %j with one line naming the variable', (environment, message) => {
    expect(() =>
      readLocalWebhooks({ WEBHOOK_URL: 'http://127.0.0.1:4000/', ...environment }, dataDirectory()),
    ).toThrow(message);
  });
});
