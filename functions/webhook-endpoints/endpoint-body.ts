/**
 * The bodies that create and change a webhook endpoint, as valibot schemas (a test compares them
 * with `openapi.yaml`), and the first failing member's Error; undeclared members are ignored.
 */
import * as v from 'valibot';
import { type ErrorCode, endpointErrorCodes } from '../shared/errors/error-codes.ts';
import { ApiError } from '../shared/errors/errors.ts';
import {
  type PlantEventType,
  plantEventTypes,
  type WebhookFormat,
  webhookFormats,
} from '../shared/webhooks/plant-events.ts';
import type { EndpointRecord } from './endpoint.ts';
import { maxUrlLength } from './endpoint-url-policy.ts';

/** The longest description, in characters as JSON Schema counts them (code points). */
export const maxDescriptionLength = 256;

/** At most `limit` code points, as JSON Schema's `maxLength` counts (🌱 is one, not two). */
export function maxCodePoints(limit: number) {
  return Object.assign(
    v.check((text: string) => {
      let count = 0;
      for (const _ of text) if (++count > limit) return false;
      return true;
    }),
    { maxCodePoints: limit },
  );
}

// Its length is checked again on what the URL parser writes (`endpoint-url.ts`).
const url = v.pipe(v.string(), maxCodePoints(maxUrlLength));
const events = v.pipe(v.array(v.picklist(plantEventTypes)), v.minLength(1));
const format = v.picklist(webhookFormats);
const description = v.pipe(v.string(), maxCodePoints(maxDescriptionLength));

/** The body of `POST /webhook-endpoints`. */
export const newEndpointSchema = v.object({
  url,
  events: v.optional(events),
  format: v.optional(format),
  description: v.optional(description),
});

/**
 * The body of `PATCH /webhook-endpoints/{endpointId}` (a merge patch: `null` removes); a member it
 * does not take (`id`, `secret`…) is refused, not ignored, since the client meant to change it.
 */
export const endpointPatchSchema = v.strictObject({
  url: v.optional(url),
  events: v.optional(events),
  format: v.optional(format),
  description: v.optional(v.nullable(description)),
  enabled: v.optional(v.boolean()),
});

/** A member's failure: its code and what it must be. */
const failures: readonly { member: string; code: ErrorCode; message: string }[] = [
  {
    member: 'description',
    code: endpointErrorCodes.invalidWebhookEndpoint,
    message: `Invalid webhook endpoint: description must be a string of at most ${maxDescriptionLength} characters.`,
  },
  {
    member: 'enabled',
    code: endpointErrorCodes.invalidWebhookEndpoint,
    message: 'Invalid webhook endpoint: enabled must be true or false.',
  },
  {
    member: 'format',
    code: endpointErrorCodes.invalidWebhookFormat,
    message: 'Invalid webhook endpoint: format must be event or plant.',
  },
  {
    member: 'events',
    code: endpointErrorCodes.unknownEventType,
    message: `Invalid webhook endpoint: events must be a non-empty list of ${plantEventTypes.join(', ')}.`,
  },
  {
    member: 'url',
    code: endpointErrorCodes.endpointUrlMalformed,
    message: `Invalid webhook endpoint: url must be an absolute URL of at most ${maxUrlLength} characters as written by a URL parser.`,
  },
];

/** `body` read by `schema`. @throws ApiError of the first failing member, in {@link failures} */
export function readEndpointBody<
  Schema extends typeof newEndpointSchema | typeof endpointPatchSchema,
>(schema: Schema, body: unknown): v.InferOutput<Schema> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ApiError(
      endpointErrorCodes.invalidWebhookEndpoint,
      'Invalid webhook endpoint: The body must be a JSON object.',
    );
  }
  const parsed = v.safeParse(schema, body);
  if (parsed.success) return parsed.output;
  const failed = new Map(parsed.issues.map((issue) => [String(issue.path?.[0]?.key), issue.input]));
  const unknown = [...failed.keys()].find((member) => !Object.hasOwn(schema.entries, member));
  if (unknown !== undefined) {
    throw new ApiError(
      endpointErrorCodes.invalidWebhookEndpoint,
      `Invalid webhook endpoint: ${unknown} cannot be changed; a patch takes ${Object.keys(schema.entries).join(', ')}.`,
    );
  }
  const failure = failures.find(({ member }) => failed.has(member)) ?? failures[0];
  if (failure === undefined) throw new Error('Unreachable: no failure named.');
  if (failure.member === 'url' && failed.get('url') === undefined) {
    throw new ApiError(failure.code, 'url is required.');
  }
  throw new ApiError(failure.code, failure.message);
}

/** What a create asks for, every field checked but the URL itself (which needs DNS). */
export type NewEndpoint = Pick<EndpointRecord, 'url' | 'events' | 'format' | 'description'>;

/** What a merge patch asks to change: a description of `null` removes it. */
export type EndpointPatch = v.InferOutput<typeof endpointPatchSchema>;

/** A create's body: `format` `event` unless given, `events` every type it carries. @throws */
export function readNewEndpoint(body: unknown): NewEndpoint {
  const fields = readEndpointBody(newEndpointSchema, body);
  const format = fields.format ?? 'event';
  const events = fields.events ?? (format === 'plant' ? ['plant.created'] : [...plantEventTypes]);
  checkCarried(format, events);
  return { url: fields.url, events: inTypeOrder(events), format, description: fields.description };
}

/** A merge patch's members; with `current` they must still make a valid endpoint. @throws */
export function readEndpointPatch(body: unknown, current: EndpointRecord): EndpointPatch {
  const fields = readEndpointBody(endpointPatchSchema, body);
  const events = fields.events === undefined ? undefined : inTypeOrder(fields.events);
  checkCarried(fields.format ?? current.format, events ?? current.events);
  const { url, format, description, enabled } = fields;
  return { url, events, format, description, enabled };
}

/** The types named, once each, in the order of {@link plantEventTypes}. */
function inTypeOrder(events: readonly PlantEventType[]): PlantEventType[] {
  return plantEventTypes.filter((type) => events.includes(type));
}

/** The `plant` format's body is the StoredPlant alone: it carries `plant.created` only. */
function checkCarried(format: WebhookFormat, events: readonly PlantEventType[]): void {
  if (format === 'plant' && events.some((type) => type !== 'plant.created')) {
    throw new ApiError(
      endpointErrorCodes.invalidWebhookFormat,
      'Invalid webhook endpoint: the plant format carries plant.created only; use the event format for other types.',
    );
  }
}
