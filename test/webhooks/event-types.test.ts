/**
 * The event types are listed once (`functions/shared/event-types.ts`): every other place
 * that names them follows that list, so a type added there and missed here fails.
 */
import { readFileSync } from 'node:fs';
import { expect, it } from '@jest/globals';
import { endpointErrorCodes } from '../../functions/shared/errors/error-codes.ts';
import { plantEventTypes } from '../../functions/shared/event-types.ts';
import { streamEventNames } from '../../functions/shared/webhooks/plant-events.ts';
import { openApiDocument } from '../api/openapi.ts';

type Schema = { enum?: string[]; const?: string; properties?: Record<string, Schema> };
const schemas = (openApiDocument as unknown as { components: { schemas: Record<string, Schema> } })
  .components.schemas;

it('holds the OpenAPI document, the error message, the stream and the docs to the one list', () => {
  expect(schemas.WebhookEventType?.enum).toEqual([...plantEventTypes]);
  // The event format's bodies: together, one type each.
  const eventBodies = Object.values(schemas).flatMap((schema) => {
    const type = schema.properties?.type;
    return schema.properties?.data === undefined || type === undefined
      ? []
      : (type.enum ?? [type.const]).filter((name) => name?.startsWith('plant.'));
  });
  expect(eventBodies.sort()).toEqual([...plantEventTypes].sort());
  // An attempt's type: every event type, and the test webhook.
  expect(schemas.DeliveryAttempt?.properties?.type?.enum).toEqual([
    ...plantEventTypes,
    'webhook.test',
  ]);
  for (const type of plantEventTypes) {
    expect(endpointErrorCodes.unknownEventType.message).toContain(type);
    expect(streamEventNames[type]).toMatch(/^(INSERT|MODIFY|REMOVE)$/);
  }
  const webhooksGuide = readFileSync(new URL('../../docs/webhooks.md', import.meta.url), 'utf8');
  const documented = [...webhooksGuide.matchAll(/^\| `(plant\.[a-z]+)` \|/gm)].map(
    (match) => match[1],
  );
  expect(documented).toEqual([...plantEventTypes]);
});
