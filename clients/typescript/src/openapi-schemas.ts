/* Generated from openapi.yaml by json-schema-to-typescript (npm run client:types): do not edit. */

/**
 * This interface was referenced by `PlantStoreSchemas`'s JSON-Schema
 * via the `definition` "WebhookEventType".
 */
export type WebhookEventType = "plant.created" | "plant.updated" | "plant.deleted";

export interface PlantStoreSchemas {
  PlantReplacement?: PlantReplacement;
  PlantPatch?: PlantPatch;
  NewPlant?: NewPlant;
  Plant?: Plant;
  StoredPlant?: StoredPlant;
  PlantChangedEvent?: PlantChangedEvent;
  PlantDeletedEvent?: PlantDeletedEvent;
  VersionedPlant?: VersionedPlant;
  WebhookEventType?: WebhookEventType;
  NewWebhookEndpoint?: NewWebhookEndpoint;
  WebhookEndpointPatch?: WebhookEndpointPatch;
  WebhookEndpoint?: WebhookEndpoint;
  CreatedWebhookEndpoint?: CreatedWebhookEndpoint;
  EndpointSecret?: EndpointSecret;
  TestQueued?: TestQueued;
  RecoverRequest?: RecoverRequest;
  RecoverQueued?: RecoverQueued;
  RotateSecretRequest?: RotateSecretRequest;
  DeliveryAttempt?: DeliveryAttempt;
  WebhookTestEvent?: WebhookTestEvent;
  Error?: Error;
}
/**
 * A plant's new name and tag. Undeclared fields are ignored and never stored.
 *
 * This interface was referenced by `PlantStoreSchemas`'s JSON-Schema
 * via the `definition` "PlantReplacement".
 */
export interface PlantReplacement {
  /**
   * Optional; when present, it must be the id in the path.
   */
  id?: number;
  name: string;
  /**
   * Optional; absent removes the tag, `null` is not a string.
   */
  tag?: string;
}
/**
 * A JSON merge patch of a plant: a member present changes that field, `tag: null` removes
 * the tag. Undeclared fields are ignored.
 *
 *
 * This interface was referenced by `PlantStoreSchemas`'s JSON-Schema
 * via the `definition` "PlantPatch".
 */
export interface PlantPatch {
  /**
   * Optional; when present, it must be the id in the path.
   */
  id?: number;
  name?: string;
  tag?: string | null;
}
/**
 * A plant to add. Undeclared fields are ignored and never stored.
 *
 * This interface was referenced by `PlantStoreSchemas`'s JSON-Schema
 * via the `definition` "NewPlant".
 */
export interface NewPlant {
  /**
   * The plant's id: any JSON number without a fractional part (`7`, `7.0` and `7e2` are
   * integers) from -2^63 to 2^63-1, kept exactly. Clients whose JSON library reads
   * numbers as doubles lose precision above 2^53; send such ids as written, not rounded.
   *
   */
  id: number;
  name: string;
  /**
   * Optional; `null` is not a string.
   */
  tag?: string;
}
/**
 * A stored plant, exactly its declared fields; `tag` is absent when it has none.
 *
 * This interface was referenced by `PlantStoreSchemas`'s JSON-Schema
 * via the `definition` "Plant".
 */
export interface Plant {
  name: string;
  tag?: string;
}
/**
 * A stored plant with its id, written as an exact JSON integer (all digits, never an
 * exponent or a string): read it with a JSON library that keeps 64-bit integers.
 *
 *
 * This interface was referenced by `PlantStoreSchemas`'s JSON-Schema
 * via the `definition` "StoredPlant".
 */
export interface StoredPlant {
  id: number;
  name: string;
  tag?: string;
}
/**
 * A `plant.created` or `plant.updated` event (the `event` format).
 *
 * This interface was referenced by `PlantStoreSchemas`'s JSON-Schema
 * via the `definition` "PlantChangedEvent".
 */
export interface PlantChangedEvent {
  type: "plant.created" | "plant.updated";
  /**
   * When the change was made (the table stream's time of it).
   */
  timestamp: string;
  data: VersionedPlant;
}
/**
 * A StoredPlant with its version, as events carry it.
 *
 * This interface was referenced by `PlantStoreSchemas`'s JSON-Schema
 * via the `definition` "VersionedPlant".
 */
export interface VersionedPlant {
  id: number;
  name: string;
  tag?: string;
  /**
   * The number in the plant's `ETag`; it only grows.
   */
  version: number;
}
/**
 * A `plant.deleted` event (the `event` format).
 *
 * This interface was referenced by `PlantStoreSchemas`'s JSON-Schema
 * via the `definition` "PlantDeletedEvent".
 */
export interface PlantDeletedEvent {
  type: "plant.deleted";
  timestamp: string;
  data: {
    id: number;
    version: number;
  };
}
/**
 * Members it does not declare are ignored.
 *
 * This interface was referenced by `PlantStoreSchemas`'s JSON-Schema
 * via the `definition` "NewWebhookEndpoint".
 */
export interface NewWebhookEndpoint {
  /**
   * Where to POST; https (http too locally), to a public host.
   */
  url: string;
  /**
   * Default every type (`plant.created` only for the `plant` format).
   *
   * @minItems 1
   */
  events?: [WebhookEventType, ...WebhookEventType[]];
  /**
   * `event`: the Standard Webhooks envelope; `plant`: the StoredPlant alone (`plant.created` only).
   */
  format?: "event" | "plant";
  description?: string;
}
/**
 * A JSON merge patch; only the members it has change. A member it does not take (`id`, `secret`, `createdAt`…) is refused with `400`/40020, not ignored.
 *
 * This interface was referenced by `PlantStoreSchemas`'s JSON-Schema
 * via the `definition` "WebhookEndpointPatch".
 */
export interface WebhookEndpointPatch {
  url?: string;
  /**
   * @minItems 1
   */
  events?: [WebhookEventType, ...WebhookEventType[]];
  format?: "event" | "plant";
  /**
   * `null` removes it.
   */
  description?: string | null;
  enabled?: boolean;
}
/**
 * This interface was referenced by `PlantStoreSchemas`'s JSON-Schema
 * via the `definition` "WebhookEndpoint".
 */
export interface WebhookEndpoint {
  id: string;
  url: string;
  /**
   * @minItems 1
   */
  events: [WebhookEventType, ...WebhookEventType[]];
  format: "event" | "plant";
  description?: string;
  enabled: boolean;
  /**
   * Why it is disabled (its owner did, or every attempt failed for 5 days).
   */
  disabledReason?: string;
  createdAt: string;
}
/**
 * The endpoint, and its signing secret (shown here and by `GET …/secret` only).
 *
 * This interface was referenced by `PlantStoreSchemas`'s JSON-Schema
 * via the `definition` "CreatedWebhookEndpoint".
 */
export interface CreatedWebhookEndpoint {
  id: string;
  url: string;
  events: WebhookEventType[];
  format: "event" | "plant";
  description?: string;
  enabled: boolean;
  createdAt: string;
  secret: string;
}
/**
 * This interface was referenced by `PlantStoreSchemas`'s JSON-Schema
 * via the `definition` "EndpointSecret".
 */
export interface EndpointSecret {
  secret: string;
}
/**
 * This interface was referenced by `PlantStoreSchemas`'s JSON-Schema
 * via the `definition` "TestQueued".
 */
export interface TestQueued {
  /**
   * The test event's `webhook-id`, as its attempts show it.
   */
  eventId: string;
}
/**
 * This interface was referenced by `PlantStoreSchemas`'s JSON-Schema
 * via the `definition` "RecoverRequest".
 */
export interface RecoverRequest {
  /**
   * RFC 3339, within the last 7 days.
   */
  since: string;
}
/**
 * This interface was referenced by `PlantStoreSchemas`'s JSON-Schema
 * via the `definition` "RecoverQueued".
 */
export interface RecoverQueued {
  /**
   * How many events were queued again.
   */
  events: number;
  /**
   * More events were missed than one call queues; call again for the next.
   */
  more: boolean;
}
/**
 * This interface was referenced by `PlantStoreSchemas`'s JSON-Schema
 * via the `definition` "RotateSecretRequest".
 */
export interface RotateSecretRequest {
  /**
   * How long the previous secret still signs, in seconds (default 86400, a day); 0
   * revokes it at once.
   *
   */
  overlapSeconds?: number;
}
/**
 * This interface was referenced by `PlantStoreSchemas`'s JSON-Schema
 * via the `definition` "DeliveryAttempt".
 */
export interface DeliveryAttempt {
  /**
   * The event's `webhook-id`.
   */
  eventId: string;
  type: "plant.created" | "plant.updated" | "plant.deleted" | "webhook.test";
  attempt: number;
  outcome: "delivered" | "failed";
  /**
   * The endpoint's HTTP status, when it answered.
   */
  responseStatus?: number;
  durationMilliseconds: number;
  /**
   * Why it failed, in a line.
   */
  failure?: string;
  attemptedAt: string;
  /**
   * The W3C trace id the attempt's `traceparent` carried, when it had one.
   */
  traceId?: string;
}
/**
 * This interface was referenced by `PlantStoreSchemas`'s JSON-Schema
 * via the `definition` "WebhookTestEvent".
 */
export interface WebhookTestEvent {
  type: "webhook.test";
  timestamp: string;
  data: {
    endpointId: string;
  };
}
/**
 * The body of every failure. Codes:
 *
 * | error | status | meaning |
 * |---|---|---|
 * | 40000 | 400 | the gateway rejected the request for a reason no other code names |
 * | 40001 | 400 | the body is not valid JSON (or is empty) |
 * | 40002 | 400 | the body is JSON but not a valid plant (or patch); the message names every failing field |
 * | 40003 | 400 | the content type is not `application/json` (`application/merge-patch+json` for `PATCH`) |
 * | 40004 | 400 | the body is larger than 16384 bytes |
 * | 40005 | 400 | a path or query parameter is invalid (`id`, `limit`, `cursor`); the message names it |
 * | 40009 | 400 | a plant with this id exists with different content |
 * | 40020 | 400 | the body is not a valid webhook endpoint (a member of the wrong type) |
 * | 40021 | 400 | an endpoint's `url` is missing or not an absolute URL |
 * | 40022 | 400 | an endpoint's `url` has a scheme not allowed (only `https` in a deployed stage) |
 * | 40023 | 400 | an endpoint's `url` carries a user name or password |
 * | 40024 | 400 | an endpoint's host is, or resolves to, an address that is not public |
 * | 40025 | 400 | an endpoint's host does not resolve |
 * | 40026 | 400 | an endpoint's `events` is empty or names an unknown type |
 * | 40027 | 400 | an endpoint's `format` is unknown, or `plant` with other types than `plant.created` |
 * | 40028 | 400 | `since` is not an RFC 3339 time of the last 7 days |
 * | 40029 | 400 | the client has as many endpoints as it may (50) |
 * | 40030 | 400 | the `Idempotency-Key` is not 1 to 255 printable ASCII characters |
 * | 40100 | 401 | missing, malformed, expired or otherwise invalid bearer token |
 * | 40300 | 403 | valid token without the operation's scope |
 * | 40400 | 404 | unknown path or method |
 * | 40401 | 404 | no plant with this id (`GET`, `PUT`, `PATCH /plants/{id}`) |
 * | 40402 | 404 | the client has no webhook endpoint with this id |
 * | 40900 | 409 | the webhook endpoint is disabled (enable it before `recover`) |
 * | 40901 | 409 | a request with this `Idempotency-Key` is under way; retry after `Retry-After` |
 * | 41200 | 412 | `If-Match` names no version the plant has (read it again), or `If-None-Match` names the one it has |
 * | 42200 | 422 | the `Idempotency-Key` was sent with a different request |
 * | 42800 | 428 | `PUT` or `PATCH` without `If-Match` |
 * | 42900 | 429 | throttled; retry later |
 * | 50000 | 500 | unexpected server fault |
 * | 50300 | 503 | the store is unavailable or throttling; safe to retry |
 *
 *
 * This interface was referenced by `PlantStoreSchemas`'s JSON-Schema
 * via the `definition` "Error".
 */
export interface Error {
  error:
    | 40000
    | 40001
    | 40002
    | 40003
    | 40004
    | 40005
    | 40009
    | 40020
    | 40021
    | 40022
    | 40023
    | 40024
    | 40025
    | 40026
    | 40027
    | 40028
    | 40029
    | 40030
    | 40100
    | 40300
    | 40400
    | 40401
    | 40402
    | 40900
    | 40901
    | 41200
    | 42200
    | 42800
    | 42900
    | 50000
    | 50300;
  /**
   * Written for people; may change. Never a stack trace or an AWS detail.
   */
  message: string;
}
