/**
 * A webhook endpoint: a receiver a client registered itself (`POST /webhook-endpoints`), owned by
 * the token's subject. What is stored, what the API shows of it (never a secret), and the request
 * bodies that create and change one, checked field by field with a code per reason.
 */
import { randomBytes } from 'node:crypto';
import { type ErrorCode, endpointErrorCodes } from '../shared/errors/error-codes.ts';
import { ApiError, InvalidParameterError } from '../shared/errors/errors.ts';
import {
  type PlantEventType,
  plantEventTypes,
  type WebhookFormat,
  webhookFormats,
} from '../shared/webhooks/plant-events.ts';
import {
  checkEndpointUrl,
  EndpointUrlError,
  type EndpointUrlPolicy,
  type UrlRefusal,
} from './endpoint-url.ts';

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

/** The longest description. */
export const maxDescriptionLength = 256;

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

/** What a create asks for, every field checked but the URL's host (which needs DNS). */
export interface NewEndpoint {
  /** Checked by `endpoint-url.ts`. */
  readonly url: unknown;
  readonly events: readonly PlantEventType[];
  readonly format: WebhookFormat;
  readonly description?: string;
}

/** What a merge patch asks to change: a description of `null` removes it. */
export interface EndpointPatch {
  readonly url?: unknown;
  readonly events?: readonly PlantEventType[];
  readonly format?: WebhookFormat;
  readonly description?: string | null;
  readonly enabled?: boolean;
}

/**
 * The body of `POST /webhook-endpoints`: `format` is `event` unless given; `events` is every
 * type unless given (`plant.created` for the `plant` format). Members it does not declare are
 * ignored.
 * @throws ApiError 40020 (a field of the wrong type), 40026 (events), 40027 (format), 40021 (no url).
 */
export function readNewEndpoint(body: unknown): NewEndpoint {
  const fields = objectOf(body);
  const description = readDescription(fields);
  const format = readFormat(fields.format) ?? 'event';
  const events =
    readEvents(fields.events) ?? (format === 'plant' ? ['plant.created'] : [...plantEventTypes]);
  checkCarried(format, events);
  if (fields.url === undefined)
    throw new ApiError(endpointErrorCodes.endpointUrlMalformed, 'url is required.');
  return {
    url: fields.url,
    events,
    format,
    ...(description === undefined || description === null ? {} : { description }),
  };
}

/**
 * The body of `PATCH /webhook-endpoints/{endpointId}` (`application/merge-patch+json`): only
 * the members it has; what they make with `current` must still be a valid endpoint.
 * @throws ApiError 40020, 40026, 40027 as {@link readNewEndpoint}.
 */
export function readEndpointPatch(body: unknown, current: EndpointRecord): EndpointPatch {
  const fields = objectOf(body);
  const description = readDescription(fields);
  if (fields.enabled !== undefined && typeof fields.enabled !== 'boolean') {
    throw invalidEndpoint('enabled must be true or false.');
  }
  const format = readFormat(fields.format);
  const events = readEvents(fields.events);
  checkCarried(format ?? current.format, events ?? current.events);
  return {
    ...(fields.url === undefined ? {} : { url: fields.url }),
    ...(events === undefined ? {} : { events }),
    ...(format === undefined ? {} : { format }),
    ...(description === undefined ? {} : { description }),
    ...(fields.enabled === undefined ? {} : { enabled: fields.enabled as boolean }),
  };
}

function objectOf(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalidEndpoint('The body must be a JSON object.');
  }
  return body as Record<string, unknown>;
}

function invalidEndpoint(
  message: string,
  code: ErrorCode = endpointErrorCodes.invalidWebhookEndpoint,
) {
  return new ApiError(code, `Invalid webhook endpoint: ${message}`);
}

/** `description`: a string of at most 256 characters, or `null` (a patch removing it). */
function readDescription(fields: Record<string, unknown>): string | null | undefined {
  const { description } = fields;
  if (description === undefined || description === null) return description;
  if (typeof description !== 'string' || description.length > maxDescriptionLength) {
    throw invalidEndpoint(
      `description must be a string of at most ${maxDescriptionLength} characters.`,
    );
  }
  return description;
}

function readFormat(value: unknown): WebhookFormat | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !(webhookFormats as readonly string[]).includes(value)) {
    throw invalidEndpoint(
      'format must be event or plant.',
      endpointErrorCodes.invalidWebhookFormat,
    );
  }
  return value as WebhookFormat;
}

function readEvents(value: unknown): PlantEventType[] | undefined {
  if (value === undefined) return undefined;
  const known = plantEventTypes as readonly string[];
  if (
    !Array.isArray(value) ||
    value.length === 0 ||
    !value.every((type) => typeof type === 'string' && known.includes(type))
  ) {
    throw invalidEndpoint(
      `events must be a non-empty list of ${plantEventTypes.join(', ')}.`,
      endpointErrorCodes.unknownEventType,
    );
  }
  return plantEventTypes.filter((type) => value.includes(type));
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

const urlRefusalCodes: Readonly<Record<UrlRefusal, ErrorCode>> = {
  malformed: endpointErrorCodes.endpointUrlMalformed,
  scheme: endpointErrorCodes.endpointUrlScheme,
  userinfo: endpointErrorCodes.endpointUrlUserInfo,
  'not-public': endpointErrorCodes.endpointUrlNotPublic,
  unresolvable: endpointErrorCodes.endpointUrlUnresolvable,
};

/**
 * The URL to store, as the URL parser writes it, once every check of the policy passed.
 * @throws ApiError 40021 to 40025, the code of the check that failed.
 */
export async function checkedUrlOf(value: unknown, policy: EndpointUrlPolicy): Promise<string> {
  try {
    return (await checkEndpointUrl(value, policy)).url.href;
  } catch (error) {
    if (!(error instanceof EndpointUrlError)) throw error;
    throw invalidEndpoint(error.message, urlRefusalCodes[error.reason]);
  }
}
