/**
 * The one list of webhook event types and of webhook formats (what each type means:
 * `plant-events.ts`). Adding a type starts here: CONTRIBUTING, "Adding an event type".
 */
export const plantEventTypes = ['plant.created', 'plant.updated', 'plant.deleted'] as const;
export type PlantEventType = (typeof plantEventTypes)[number];

/** `plant`: the StoredPlant alone (creates only); `event`: the Standard Webhooks envelope. */
export const webhookFormats = ['plant', 'event'] as const;
export type WebhookFormat = (typeof webhookFormats)[number];
