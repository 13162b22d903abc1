/**
 * Endpoint secrets under the stage's data key, against moto's KMS and DynamoDB Local: one KMS
 * call a container however many secrets it opens, one data key however many functions race to
 * make it, each secret bound to its endpoint, and a secret KMS sealed itself still opened.
 *
 * @services dynamodb-local
 */
import { randomUUID } from 'node:crypto';
import { CreateKeyCommand, EncryptCommand, type KMSClient } from '@aws-sdk/client-kms';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { type MotoServer, startMotoServer } from '../../../beds/moto-server.ts';
import { createDocumentClient } from '../../../functions/shared/platform/dynamodb.ts';
import {
  type DataKeyStore,
  kmsOpener,
  kmsSecretBox,
  newEndpointSecret,
} from '../../../functions/webhook-endpoints/secret-box.ts';
import { createWebhookEndpointTablesIfMissing } from '../../../local/tables.ts';
import { testStoreUrl } from '../../support/test-store.ts';

let moto: MotoServer;
let keyId: string;
const documentClient = createDocumentClient({ url: testStoreUrl() });

beforeAll(async () => {
  moto = await startMotoServer();
  const { KeyMetadata } = await moto.kms.send(new CreateKeyCommand({ Description: 'secrets' }));
  keyId = KeyMetadata?.KeyId ?? '';
}, 180_000);

afterAll(async () => {
  documentClient.destroy();
  await moto?.stop();
});

/** A stage's endpoints table of its own. */
async function storeOf(): Promise<DataKeyStore> {
  const names = { endpoints: `endpoints-${randomUUID()}`, log: `log-${randomUUID()}` };
  await createWebhookEndpointTablesIfMissing(documentClient, names);
  return { documentClient, tableName: names.endpoints };
}

/** moto's KMS, counting each command by its name. */
function countingKms() {
  const calls: string[] = [];
  const kms: Pick<KMSClient, 'send'> = {
    send: ((command: { constructor: { name: string } }) => {
      calls.push(command.constructor.name);
      return moto.kms.send(command as never);
    }) as KMSClient['send'],
  };
  return { calls, kms };
}

it('opens any number of secrets with one KMS call a container, each only for its endpoint', async () => {
  const store = await storeOf();
  const sealer = kmsSecretBox(moto.kms, keyId, store);
  const secrets = Array.from({ length: 50 }, (_, index) => ({
    id: `ep_${index}`,
    secret: newEndpointSecret(),
  }));
  const sealed = await Promise.all(secrets.map(({ id, secret }) => sealer.seal(secret, id)));
  for (const one of sealed) expect(one).toMatch(/^dk1:[\w-]+\.[\w-]+\.[\w-]+$/);
  // A new container: one Decrypt of the data key, then none.
  const { calls, kms } = countingKms();
  const opener = kmsOpener(kms, keyId, store);
  const opened = await Promise.all(sealed.map((one, index) => opener.open(one, `ep_${index}`)));
  expect(opened).toEqual(secrets.map(({ secret }) => secret));
  expect(calls).toEqual(['DecryptCommand']);
  // Bound to its endpoint: another's id does not open it.
  await expect(opener.open(sealed[0] as string, 'ep_1')).rejects.toThrow();
  // A sealer's container (create, rotate) seals and opens under the one data key it opened.
  const sealing = countingKms();
  const box = kmsSecretBox(sealing.kms, keyId, store);
  const again = await box.seal(secrets[0]?.secret ?? '', 'ep_0');
  expect(await box.open(again, 'ep_0')).toBe(secrets[0]?.secret);
  expect(await box.open(sealed[1] as string, 'ep_1')).toBe(secrets[1]?.secret);
  expect(sealing.calls).toEqual(['DecryptCommand']);
});

it('makes one data key for the stage however many functions race to seal the first secret', async () => {
  const store = await storeOf();
  const sealers = Array.from({ length: 8 }, () => kmsSecretBox(moto.kms, keyId, store));
  const secret = newEndpointSecret();
  const sealed = await Promise.all(sealers.map((box) => box.seal(secret, 'ep_race')));
  const { Items = [] } = await documentClient.send(new ScanCommand({ TableName: store.tableName }));
  expect(Items).toEqual([expect.objectContaining({ owner: '#stage', endpointId: 'data-key#1' })]);
  // Every one of them sealed under the kept key: a new container opens them all.
  const opener = kmsOpener(moto.kms, keyId, store);
  for (const one of sealed) expect(await opener.open(one, 'ep_race')).toBe(secret);
});

it('still opens a secret KMS sealed itself, bound to its endpoint, before the data key', async () => {
  const store = await storeOf();
  const secret = newEndpointSecret();
  const { CiphertextBlob } = await moto.kms.send(
    new EncryptCommand({
      KeyId: keyId,
      Plaintext: Buffer.from(secret),
      EncryptionContext: { endpointId: 'ep_old' },
    }),
  );
  const sealed = `kms:${Buffer.from(CiphertextBlob ?? []).toString('base64')}`;
  const opener = kmsOpener(moto.kms, keyId, store);
  expect(await opener.open(sealed, 'ep_old')).toBe(secret);
  await expect(opener.open(sealed, 'ep_other')).rejects.toThrow();
  // No data key is made to open one: the stage has none until a secret is sealed under it.
  await expect(opener.open('dk1:a.b.c', 'ep_old')).rejects.toThrow(
    'The stage has no data key yet.',
  );
});
