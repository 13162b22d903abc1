/**
 * Endpoint secrets, sealed with AES-256-GCM bound to the endpoint's id: under the stage's data
 * key, itself sealed by the stage's KMS key and opened once a container, so that opening
 * 20,000 endpoints' secrets costs a container one KMS call (docs/decisions/endpoint-secrets.md);
 * locally, under a key of its own. Never logged.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { DecryptCommand, GenerateDataKeyCommand, type KMSClient } from '@aws-sdk/client-kms';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { type StoreDependencies, sendToStore, writeIf } from '../shared/platform/dynamodb.ts';

/** Seals and opens secrets, each bound to the endpoint it belongs to. */
export interface SecretBox {
  seal(secret: string, endpointId: string): Promise<string>;
  open(sealed: string, endpointId: string): Promise<string>;
}

/** A new signing secret in the Standard Webhooks form: `whsec_` and 32 random bytes, base64. */
export function newEndpointSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** Where the stage's data key is kept, sealed by KMS: an item of the endpoints table. */
export type DataKeyStore = Pick<StoreDependencies, 'documentClient' | 'tableName'>;

type Kms = Pick<KMSClient, 'send'>;
const dataKeyItem = { owner: '#stage', endpointId: 'data-key#1' } as const;
const dataKeyContext = { purpose: 'endpoint-secrets' };
/** A secret sealed under the stage's data key; `kms:` ones (each its own KMS call) still open. */
const dataKeyPrefix = 'dk1';

async function readSealedDataKey(store: DataKeyStore): Promise<string | undefined> {
  const { Item } = await sendToStore(
    store,
    new GetCommand({ TableName: store.tableName, Key: dataKeyItem, ConsistentRead: true }),
  );
  return typeof Item?.sealed === 'string' ? Item.sealed : undefined;
}

/** Makes the stage's data key, unless another function made it first: the kept one, sealed. */
async function makeDataKey(kms: Kms, keyId: string, store: DataKeyStore) {
  const { CiphertextBlob } = await kms.send(
    new GenerateDataKeyCommand({
      KeyId: keyId,
      KeySpec: 'AES_256',
      EncryptionContext: dataKeyContext,
    }),
  );
  const sealed = Buffer.from(CiphertextBlob ?? []).toString('base64');
  const put = new PutCommand({
    TableName: store.tableName,
    Item: { ...dataKeyItem, sealed },
    ConditionExpression: 'attribute_not_exists(endpointId)',
  });
  const written = await writeIf((abortSignal) => store.documentClient.send(put, { abortSignal }));
  return 'conditionFailed' in written ? await readSealedDataKey(store) : sealed;
}

/** The data key's box, opened by KMS once a container (again after a failure); `make` makes it. */
function dataKeyBox(
  kms: Kms,
  keyId: string,
  store: DataKeyStore,
  make?: () => Promise<string | undefined>,
): () => Promise<SecretBox> {
  let box: Promise<SecretBox> | undefined;
  const open = async () => {
    const sealed = (await readSealedDataKey(store)) ?? (await make?.());
    if (sealed === undefined) throw new Error('The stage has no data key yet.');
    const { Plaintext } = await kms.send(
      new DecryptCommand({
        KeyId: keyId,
        CiphertextBlob: Buffer.from(sealed, 'base64'),
        EncryptionContext: dataKeyContext,
      }),
    );
    return aesSecretBox(Buffer.from(Plaintext ?? []), dataKeyPrefix);
  };
  return () =>
    (box ??= open().catch((error: unknown) => {
      box = undefined;
      throw error;
    }));
}

/** Opening (`kms:Decrypt`): the secret's and the delivery's functions. */
export function kmsOpener(kms: Kms, keyId: string, store: DataKeyStore): Pick<SecretBox, 'open'> {
  return { open: openerOf(kms, keyId, dataKeyBox(kms, keyId, store)) };
}

/** Opens a secret under the data key of `box`, or one KMS sealed itself, before the data key. */
function openerOf(kms: Kms, keyId: string, box: () => Promise<SecretBox>): SecretBox['open'] {
  return async (sealed, endpointId) => {
    if (!sealed.startsWith('kms:')) return (await box()).open(sealed, endpointId);
    const { Plaintext } = await kms.send(
      new DecryptCommand({
        KeyId: keyId,
        CiphertextBlob: Buffer.from(sealed.slice(4), 'base64'),
        EncryptionContext: { endpointId },
      }),
    );
    return Buffer.from(Plaintext ?? []).toString('utf8');
  };
}

/** Create's and rotate's box: seals (making the data key first) and opens, under one data key. */
export function kmsSecretBox(kms: Kms, keyId: string, store: DataKeyStore): SecretBox {
  const box = dataKeyBox(kms, keyId, store, () => makeDataKey(kms, keyId, store));
  return {
    seal: async (secret, endpointId) => (await box()).seal(secret, endpointId),
    open: openerOf(kms, keyId, box),
  };
}

/** Secrets sealed with AES-256-GCM under a 32-byte key, the endpoint's id authenticated too. */
export function localSecretBox(key: Uint8Array): SecretBox {
  return aesSecretBox(key, 'aes');
}

function aesSecretBox(key: Uint8Array, prefix: string): SecretBox {
  if (key.byteLength !== 32) throw new Error('The local secret key must be 32 bytes.');
  return {
    seal: async (secret, endpointId) => {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(endpointId));
      const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return `${prefix}:${[iv, sealed, cipher.getAuthTag()].map((part) => part.toString('base64url')).join('.')}`;
    },
    open: async (sealed, endpointId) => {
      const [iv, data, tag] = sealed.slice(prefix.length + 1).split('.');
      if (!sealed.startsWith(`${prefix}:`) || iv === undefined || data === undefined || !tag) {
        throw new Error(
          `Not a secret sealed ${prefix === 'aes' ? 'by the local key' : 'by the stage'}.`,
        );
      }
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'))
        .setAAD(Buffer.from(endpointId))
        .setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([
        decipher.update(Buffer.from(data, 'base64url')),
        decipher.final(),
      ]).toString('utf8');
    },
  };
}
