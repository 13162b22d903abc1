/**
 * Each field of a plant, through every place that carries one: a create, a read, the list, a
 * `PUT`, a `PATCH`, the webhook events and a `recover` (which sends them again from the webhook
 * log). The fields come from the NewPlant schema, so a field added there and missed in one place
 * fails here (CONTRIBUTING, "Adding a field to a plant").
 *
 * @services dynamodb-local
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { newPlantSchema } from '../../functions/create-plant/new-plant.ts';
import { plantEventTypes } from '../../functions/shared/event-types.ts';
import { type EndpointBed, startEndpointBed } from './endpoint-bed.ts';

/** Every field of a plant but its id. */
const fields = Object.keys(newPlantSchema.entries).filter((field) => field !== 'id');
/** A value of each field, different in each round. */
const valuesOf = (round: string) =>
  Object.fromEntries(fields.map((field) => [field, `${field} ${round}`]));

let bed: EndpointBed;

beforeAll(async () => {
  bed = await startEndpointBed();
}, 180_000);

afterAll(async () => {
  await bed?.stop();
});

async function send(method: string, path: string, body?: unknown, headers = {}) {
  const response = await fetch(`${bed.api.url}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${bed.api.signToken({ scope: 'plants/read plants/write' })}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return {
    status: response.status,
    etag: response.headers.get('etag'),
    body: await response.json(),
  };
}

it('carries every field through a create, a read, the list, a replace, a patch, the webhooks and a recover', async () => {
  expect(fields.length).toBeGreaterThan(0);
  const id = 7_000_000 + Math.floor(Math.random() * 1_000_000);
  const hooks = await bed.receiver();
  const since = new Date(Date.now() - 1000).toISOString();
  const endpoint = await bed.register('fields-client', hooks, {
    format: 'event',
    events: [...plantEventTypes],
  });
  const [created, replaced, patched] = ['created', 'replaced', 'patched'].map(valuesOf);

  const create = await send('POST', '/plants', { id, ...created });
  expect(create.body).toEqual(created);
  expect((await send('GET', `/plants/${id}`)).body).toEqual({ id, ...created });
  const list = await send('GET', '/plants?limit=100');
  expect(list.body).toContainEqual({ id, ...created });

  const put = await send('PUT', `/plants/${id}`, { ...replaced }, { 'If-Match': create.etag });
  expect(put.body).toEqual({ id, ...replaced });
  let etag = put.etag;
  for (const field of fields) {
    const patch = await send(
      'PATCH',
      `/plants/${id}`,
      { [field]: `${field} patched` },
      { 'If-Match': etag, 'Content-Type': 'application/merge-patch+json' },
    );
    expect(patch.status).toBe(200);
    etag = patch.etag;
  }
  expect((await send('GET', `/plants/${id}`)).body).toEqual({ id, ...patched });

  // The events, as the endpoint heard them: the create, the replace and each patch.
  await hooks.waitForAccepted(2 + fields.length);
  const heard = () =>
    hooks.deliveries
      .filter((delivery) => delivery.verified)
      .map((delivery) => JSON.parse(delivery.body))
      .filter((event) => event.data?.id === id);
  expect(heard().map((event) => event.data)).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ id, ...created }),
      expect.objectContaining({ id, ...replaced }),
      expect.objectContaining({ id, ...patched }),
    ]),
  );

  // Sent again from the webhook log: disabled, then enabled and recovered, the create once more.
  const patchEndpoint = (body: unknown) =>
    bed.request('fields-client', 'PATCH', `/webhook-endpoints/${endpoint.id}`, body, {
      'Content-Type': 'application/merge-patch+json',
      'If-Match': '*',
    });
  await patchEndpoint({ enabled: false });
  const missedId = id + 1;
  await send('POST', '/plants', { id: missedId, ...created });
  await new Promise((resolve) => setTimeout(resolve, 1000));
  await patchEndpoint({ enabled: true });
  const recovered = await bed.request(
    'fields-client',
    'POST',
    `/webhook-endpoints/${endpoint.id}/recover`,
    { since },
  );
  expect(recovered.status).toBe(202);
  await hooks.waitForAccepted(3 + fields.length);
  const resent = hooks.deliveries
    .filter((delivery) => delivery.verified)
    .map((delivery) => JSON.parse(delivery.body))
    .find((event) => event.data?.id === missedId);
  expect(resent?.data).toEqual(expect.objectContaining({ id: missedId, ...created }));
});
