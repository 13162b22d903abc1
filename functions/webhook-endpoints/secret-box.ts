/**
 * Endpoint secrets, sealed by the stage's KMS key bound to the endpoint's id (about $1 a month at
 * 10,000 endpoints: docs/decisions/endpoint-secrets.md); locally, AES-256-GCM. Never logged.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { DecryptCommand, EncryptCommand, type KMSClient } from '@aws-sdk/client-kms';

/** Seals and opens secrets, each bound to the endpoint it belongs to. */
export interface SecretBox {
  seal(secret: string, endpointId: string): Promise<string>;
  open(sealed: string, endpointId: string): Promise<string>;
}

/** A new signing secret in the Standard Webhooks form: `whsec_` and 32 random bytes, base64. */
export function newEndpointSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** Sealing (`kms:Encrypt`). */
export function kmsSealer(kms: Pick<KMSClient, 'send'>, keyId: string): Pick<SecretBox, 'seal'> {
  return {
    seal: async (secret, endpointId) => {
      const { CiphertextBlob } = await kms.send(
        new EncryptCommand({
          KeyId: keyId,
          Plaintext: Buffer.from(secret, 'utf8'),
          EncryptionContext: { endpointId },
        }),
      );
      return `kms:${Buffer.from(CiphertextBlob ?? []).toString('base64')}`;
    },
  };
}

/** Opening with a KMS key (`kms:Decrypt`): the secret's and the delivery's functions. */
export function kmsOpener(kms: Pick<KMSClient, 'send'>, keyId: string): Pick<SecretBox, 'open'> {
  return {
    open: async (sealed, endpointId) => {
      if (!sealed.startsWith('kms:')) throw new Error('Not a secret sealed by KMS.');
      const { Plaintext } = await kms.send(
        new DecryptCommand({
          KeyId: keyId,
          CiphertextBlob: Buffer.from(sealed.slice(4), 'base64'),
          EncryptionContext: { endpointId },
        }),
      );
      return Buffer.from(Plaintext ?? []).toString('utf8');
    },
  };
}

/** Both: create and rotate seal a new secret, and open it again for a retry's kept answer. */
export function kmsSecretBox(kms: Pick<KMSClient, 'send'>, keyId: string): SecretBox {
  return { ...kmsSealer(kms, keyId), ...kmsOpener(kms, keyId) };
}

/** Secrets sealed with AES-256-GCM under a 32-byte key, the endpoint's id authenticated too. */
export function localSecretBox(key: Uint8Array): SecretBox {
  if (key.byteLength !== 32) throw new Error('The local secret key must be 32 bytes.');
  return {
    seal: async (secret, endpointId) => {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(endpointId));
      const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return `aes:${[iv, sealed, cipher.getAuthTag()].map((part) => part.toString('base64url')).join('.')}`;
    },
    open: async (sealed, endpointId) => {
      const [iv, data, tag] = sealed.replace(/^aes:/, '').split('.');
      if (!sealed.startsWith('aes:') || iv === undefined || data === undefined || !tag) {
        throw new Error('Not a secret sealed by the local key.');
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
