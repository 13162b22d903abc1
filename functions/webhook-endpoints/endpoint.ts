/**
 * A webhook endpoint: a receiver a client registered itself (`POST /webhook-endpoints`), owned by
 * the token's subject. What is stored, what the API shows of it (never a secret), and what the
 * bodies that create and change one (`endpoint-body.ts`) ask for.
 */
import { randomBytes } from 'node:crypto';
import { type ErrorCode, endpointErrorCodes } from '../shared/errors/error-codes.ts';
import { ApiError, InvalidParameterError } from '../shared/errors/errors.ts';
import {
  type PlantEventType,
  plantEventTypes,
  type WebhookFormat,
} from '../shared/webhooks/plant-events.ts';
import { endpointPatchSchema, newEndpointSchema, readEndpointBody } from './endpoint-body.ts';

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
  /** Grows with every change: the `ETag` (`plant-version.ts`'s clock). */
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

/** The Endpoint of the API: the record without its owner, version, secrets or failure state. */
export function viewOf(record: EndpointRecord): EndpointView {
  return {
    id: record.id,
    url: record.url,
    events: record.events,
    format: record.format,
    ...(record.description === undefined ? {} : { description: record.description }),
    enabled: record.enabled,
    ...(record.disabledReason === undefined ? {} : { disabledReason: record.disabledReason }),
    createdAt: record.createdAt,
  };
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

/**
 * The `{endpointId}` of the path.
 * @throws InvalidParameterError (40005) when it is not an endpoint id.
 */
export function readEndpointIdParameter(pathParameters: Record<string, string | undefined> | null) {
  const id = pathParameters?.endpointId;
  if (id === undefined || !endpointIdPattern.test(id)) {
    throw new InvalidParameterError(
      'Invalid parameter: endpointId must be an endpoint id (ep_ and 26 letters and digits).',
    );
  }
  return id;
}

/** What a create asks for, every field checked but the URL itself (which needs DNS). */
export interface NewEndpoint {
  readonly url: string;
  readonly events: readonly PlantEventType[];
  readonly format: WebhookFormat;
  readonly description?: string;
}

/** What a merge patch asks to change: a description of `null` removes it. */
export interface EndpointPatch {
  readonly url?: string;
  readonly events?: readonly PlantEventType[];
  readonly format?: WebhookFormat;
  readonly description?: string | null;
  readonly enabled?: boolean;
}

/**
 * The body of `POST /webhook-endpoints`: `format` is `event` unless given; `events` is every
 * type unless given (`plant.created` for the `plant` format).
 * @throws ApiError as `readEndpointBody` says, or 40027 for the `plant` format with other events.
 */
export function readNewEndpoint(body: unknown): NewEndpoint {
  const fields = readEndpointBody(newEndpointSchema, body);
  const format = fields.format ?? 'event';
  const events = fields.events ?? (format === 'plant' ? ['plant.created'] : [...plantEventTypes]);
  checkCarried(format, events);
  return {
    url: fields.url,
    events: inTypeOrder(events),
    format,
    ...(fields.description === undefined ? {} : { description: fields.description }),
  };
}

/**
 * The body of `PATCH /webhook-endpoints/{endpointId}` (`application/merge-patch+json`): only
 * the members it has; what they make with `current` must still be a valid endpoint.
 * @throws ApiError as {@link readNewEndpoint}.
 */
export function readEndpointPatch(body: unknown, current: EndpointRecord): EndpointPatch {
  const fields = readEndpointBody(endpointPatchSchema, body);
  const events = fields.events === undefined ? undefined : inTypeOrder(fields.events);
  checkCarried(fields.format ?? current.format, events ?? current.events);
  return {
    ...(fields.url === undefined ? {} : { url: fields.url }),
    ...(events === undefined ? {} : { events }),
    ...(fields.format === undefined ? {} : { format: fields.format }),
    ...(fields.description === undefined ? {} : { description: fields.description }),
    ...(fields.enabled === undefined ? {} : { enabled: fields.enabled }),
  };
}

/** The types named, once each, in the order of {@link plantEventTypes}. */
function inTypeOrder(events: readonly PlantEventType[]): PlantEventType[] {
  return plantEventTypes.filter((type) => events.includes(type));
}

function invalidEndpoint(
  message: string,
  code: ErrorCode = endpointErrorCodes.invalidWebhookEndpoint,
) {
  return new ApiError(code, `Invalid webhook endpoint: ${message}`);
}

/** The `plant` format's body is the StoredPlant alone: it carries `plant.created` only. */
function checkCarried(format: WebhookFormat, events: readonly PlantEventType[]): void {
  if (format === 'plant' && events.some((type) => type !== 'plant.created')) {
    throw invalidEndpoint(
      'the plant format carries plant.created only; use the event format for other types.',
      endpointErrorCodes.invalidWebhookFormat,
    );
  }
}
