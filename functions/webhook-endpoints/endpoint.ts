/** A client's webhook endpoint, owned by the token's subject: as stored, as shown (no secret). */
import { randomBytes } from 'node:crypto';
import { invalidParameter } from '../shared/errors/errors.ts';
import type { PlantEventType, WebhookFormat } from '../shared/webhooks/plant-events.ts';

/** An endpoint as the endpoints table keeps it. */
export interface EndpointRecord {
  readonly id: string;
  /** The subject (`sub`) of the token that created it: only it sees or changes the endpoint. */
  readonly owner: string;
  readonly url: string;
  readonly events: readonly PlantEventType[];
  readonly format: WebhookFormat;
  readonly description?: string;
  readonly enabled: boolean;
  readonly disabledReason?: string;
  /** RFC 3339, milliseconds, UTC. */
  readonly createdAt: string;
  /** Grows with every change: the `ETag` (`shared/http/entity-version.ts`'s clock). */
  readonly version: number;
  /** The signing secret, sealed (`secret-box.ts`). */
  readonly secret: string;
  /** After a rotation, the secret before it, sealed, and until when deliveries carry it too. */
  readonly previousSecret?: string;
  readonly previousSecretUntil?: number;
  /** When the current run of failed attempts began (ms), cleared by a delivery. */
  readonly failingSince?: number;
}

/** What the API shows of an endpoint: the record without its owner, version, secrets or failures. */
export type EndpointView = Pick<
  EndpointRecord,
  'id' | 'url' | 'events' | 'format' | 'description' | 'enabled' | 'disabledReason' | 'createdAt'
>;

export function viewOf(record: EndpointRecord): EndpointView {
  const { id, url, events, format, description, enabled, disabledReason, createdAt } = record;
  return { id, url, events, format, description, enabled, disabledReason, createdAt };
}

/** How long deliveries carry the previous secret's signature after a rotation: 24 hours. */
export const rotationOverlapMilliseconds = 24 * 60 * 60 * 1000;

/** Every attempt failing for this long disables an endpoint: 5 days. */
export const failingLimitMilliseconds = 5 * 24 * 60 * 60 * 1000;

/** The most endpoints one client may have. */
export const maxEndpointsPerOwner = 50;

// Crockford's base32, lower case: ids sort by creation time and read unambiguously.
const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';

/** `ep_`, ten characters of the creation time in milliseconds, sixteen random ones. */
export const endpointIdPattern = /^ep_[0-9abcdefghjkmnpqrstvwxyz]{26}$/;

/** A new endpoint id: creation order is id order. */
export function newEndpointId(now: number): string {
  let time = '';
  for (let rest = now, index = 0; index < 10; index += 1, rest = Math.floor(rest / 32)) {
    time = alphabet[rest % 32] + time;
  }
  const random = [...randomBytes(16)].map((byte) => alphabet[byte % 32]).join('');
  return `ep_${time}${random}`;
}

/** The path's `{endpointId}`. @throws ApiError 40005 */
export function readEndpointIdParameter(pathParameters: Record<string, string | undefined> | null) {
  const id = pathParameters?.endpointId;
  if (id === undefined || !endpointIdPattern.test(id)) {
    throw invalidParameter('endpointId must be an endpoint id (ep_ and 26 letters and digits).');
  }
  return id;
}
