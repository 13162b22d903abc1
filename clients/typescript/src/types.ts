/**
 * The API's shapes as the client hands them to you: the schemas generated from `openapi.yaml`
 * (`openapi-schemas.ts`), every `id` a `bigint` (exact to ±2^63, which a JSON `number` is not).
 */
import type * as Schemas from './openapi-schemas.ts';

/** A schema with every `id` a `bigint`, read-only, in nested objects too. */
export type WithExactIds<T> = {
  readonly [Key in keyof T]: Key extends 'id'
    ? bigint
    : T[Key] extends object
      ? WithExactIds<T[Key]>
      : T[Key];
};

/** A plant to add (`NewPlant`). */
export type NewPlant = WithExactIds<Schemas.NewPlant>;
/** What a create answers (`Plant`): the stored fields without the id. */
export type Plant = WithExactIds<Schemas.Plant>;
/** A stored plant (`StoredPlant`). */
export type StoredPlant = WithExactIds<Schemas.StoredPlant>;
/** A plant's new name and tag (`PlantReplacement`, the body of `PUT`); the client sends the id. */
export type PlantReplacement = Omit<WithExactIds<Schemas.PlantReplacement>, 'id'>;
/** A JSON merge patch of a plant (`PlantPatch`): `tag: null` removes the tag. */
export type PlantPatch = Omit<WithExactIds<Schemas.PlantPatch>, 'id'>;
/** A plant as events carry it (`VersionedPlant`). */
export type VersionedPlant = WithExactIds<Schemas.VersionedPlant>;
/** A webhook in the `event` format. */
export type PlantEvent =
  | WithExactIds<Schemas.PlantChangedEvent>
  | WithExactIds<Schemas.PlantDeletedEvent>;
/** Every failure's body (`Error`). */
export type ErrorBody = Schemas.Error;
/** A webhook endpoint to register (`NewWebhookEndpoint`). */
export type NewWebhookEndpoint = Schemas.NewWebhookEndpoint;
/** A merge patch of an endpoint (`WebhookEndpointPatch`): `description: null` removes it. */
export type WebhookEndpointPatch = Schemas.WebhookEndpointPatch;
/** A registered endpoint (`WebhookEndpoint`); never its secret. */
export type WebhookEndpoint = Readonly<Schemas.WebhookEndpoint>;
/** What a registration answers: the endpoint and its secret (`CreatedWebhookEndpoint`). */
export type CreatedWebhookEndpoint = Readonly<Schemas.CreatedWebhookEndpoint>;
/** One attempt at an endpoint (`DeliveryAttempt`). */
export type DeliveryAttempt = Readonly<Schemas.DeliveryAttempt>;
/** The test event an endpoint's owner asks for (`WebhookTestEvent`). */
export type WebhookTestEvent = Readonly<Schemas.WebhookTestEvent>;
