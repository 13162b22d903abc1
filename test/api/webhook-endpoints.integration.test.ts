/**
 * The webhook endpoint routes through the local API as clients see them: each endpoint its
 * owner's alone (another client gets 404, never 403, and never sees it listed), every bad body
 * and hostile URL answered 400 in the Error shape with its reason's code, conditional changes,
 * paging. Every answer is held to openapi.yaml.
 *
 * @services dynamodb-local
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Answer, type EndpointBed, startEndpointBed } from './endpoint-bed.ts';
import { expectDocumentedResponse, operationById } from './openapi.ts';

let bed: EndpointBed;

beforeAll(async () => {
  bed = await startEndpointBed();
}, 180_000);

afterAll(async () => {
  await bed?.stop();
});

/** A request whose answer must be one openapi.yaml documents for the operation. */
async function documented(
  operationId: string,
  client: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const response = await fetch(`${bed.api.url}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${bed.api.signToken({ scope: 'webhooks/manage plants/read', subject: client })}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  operationById(operationId);
  const parsed = await expectDocumentedResponse(response, operationId);
  return { status: response.status, headers: response.headers, body: parsed };
}

const merge = { 'Content-Type': 'application/merge-patch+json' };

describe('an endpoint belongs to its owner', () => {
  it('is created with its secret, read without it, and answered 404 to every other client', async () => {
    const created = await documented(
      'createWebhookEndpoint',
      'owner-a',
      'POST',
      '/webhook-endpoints',
      {
        url: 'http://127.0.0.1:9/hooks',
        description: 'Inventory sync',
        format: 'plant',
      },
    );
    expect(created.status).toBe(201);
    const { id, secret, ...endpoint } = created.body;
    expect(endpoint).toEqual({
      url: 'http://127.0.0.1:9/hooks',
      events: ['plant.created'],
      format: 'plant',
      description: 'Inventory sync',
      enabled: true,
      createdAt: expect.any(String),
    });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created.headers.get('location')).toBe(`${bed.api.url}/webhook-endpoints/${id}`);
    expect(created.headers.get('cache-control')).toBe('no-store');

    const read = await documented(
      'getWebhookEndpoint',
      'owner-a',
      'GET',
      `/webhook-endpoints/${id}`,
    );
    expect(read.body).toEqual({ id, ...endpoint });
    expect(JSON.stringify(read.body)).not.toContain('whsec_');
    const etag = read.headers.get('etag') ?? '';
    expect(
      (
        await documented(
          'getWebhookEndpoint',
          'owner-a',
          'GET',
          `/webhook-endpoints/${id}`,
          undefined,
          { 'If-None-Match': etag },
        )
      ).status,
    ).toBe(304);

    // Another client: the same answer as for an id nobody has, on every route.
    const other = [
      ['getWebhookEndpoint', 'GET', '', undefined, {}],
      ['updateWebhookEndpoint', 'PATCH', '', { enabled: false }, { ...merge, 'If-Match': '*' }],
      ['deleteWebhookEndpoint', 'DELETE', '', undefined, {}],
      ['getWebhookEndpointSecret', 'GET', '/secret', undefined, {}],
      ['rotateWebhookEndpointSecret', 'POST', '/secret/rotate', undefined, {}],
      ['testWebhookEndpoint', 'POST', '/test', undefined, {}],
      ['listWebhookEndpointAttempts', 'GET', '/attempts', undefined, {}],
      ['recoverWebhookEndpoint', 'POST', '/recover', { since: new Date().toISOString() }, {}],
    ] as const;
    for (const [operationId, method, suffix, body, headers] of other) {
      const answer = await documented(
        operationId,
        'owner-b',
        method,
        `/webhook-endpoints/${id}${suffix}`,
        body,
        headers,
      );
      expect([operationId, answer.status, answer.body]).toEqual([
        operationId,
        404,
        { error: 40402, message: 'No webhook endpoint of this client has this id.' },
      ]);
    }
    expect(
      (await documented('listWebhookEndpoints', 'owner-b', 'GET', '/webhook-endpoints')).body,
    ).toEqual([]);
    // Untouched by all that.
    expect(
      (await documented('getWebhookEndpoint', 'owner-a', 'GET', `/webhook-endpoints/${id}`)).body,
    ).toEqual(read.body);
    expect(
      (
        await documented(
          'getWebhookEndpointSecret',
          'owner-a',
          'GET',
          `/webhook-endpoints/${id}/secret`,
        )
      ).body,
    ).toEqual({ secret });
  });

  it('lists a client\u2019s endpoints oldest first, a page at a time, by the Link header as it is', async () => {
    const ids: string[] = [];
    for (let index = 0; index < 5; index += 1) {
      const created = await documented(
        'createWebhookEndpoint',
        'lister',
        'POST',
        '/webhook-endpoints',
        {
          url: `http://127.0.0.1:9/hooks/${index}`,
        },
      );
      ids.push(created.body.id);
    }
    const seen: string[] = [];
    let path: string | undefined = '/webhook-endpoints?limit=2';
    let pages = 0;
    while (path !== undefined) {
      const page = await documented('listWebhookEndpoints', 'lister', 'GET', path);
      pages += 1;
      seen.push(...page.body.map((endpoint: { id: string }) => endpoint.id));
      const link = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')?.[1];
      path = link?.replace(bed.api.url, '');
    }
    expect(seen).toEqual(ids);
    expect(pages).toBe(3);
    const tampered = await documented(
      'listWebhookEndpoints',
      'lister',
      'GET',
      '/webhook-endpoints?cursor=xyz',
    );
    expect(tampered.body).toMatchObject({ error: 40005 });
  });
});

describe('changing an endpoint', () => {
  it('needs If-Match, refuses a stale one, and changes only what the merge patch names', async () => {
    const created = await documented(
      'createWebhookEndpoint',
      'changer',
      'POST',
      '/webhook-endpoints',
      {
        url: 'http://127.0.0.1:9/hooks',
        description: 'first',
      },
    );
    const path = `/webhook-endpoints/${created.body.id}`;
    const read = await documented('getWebhookEndpoint', 'changer', 'GET', path);
    const etag = read.headers.get('etag') ?? '';
    const noMatch = await documented(
      'updateWebhookEndpoint',
      'changer',
      'PATCH',
      path,
      { description: 'x' },
      merge,
    );
    expect(noMatch.body).toEqual({
      error: 42800,
      message: 'A change needs If-Match with the ETag of the webhook endpoint read last.',
    });
    const changed = await documented(
      'updateWebhookEndpoint',
      'changer',
      'PATCH',
      path,
      { events: ['plant.deleted'], description: null },
      { ...merge, 'If-Match': etag },
    );
    expect(changed.body).toMatchObject({ events: ['plant.deleted'], format: 'event' });
    expect(changed.body.description).toBeUndefined();
    expect(changed.headers.get('etag')).not.toBe(etag);
    const stale = await documented(
      'updateWebhookEndpoint',
      'changer',
      'PATCH',
      path,
      { enabled: false },
      { ...merge, 'If-Match': etag },
    );
    expect(stale.body).toMatchObject({ error: 41200 });
    const plantWithDeletes = await documented(
      'updateWebhookEndpoint',
      'changer',
      'PATCH',
      path,
      { format: 'plant' },
      { ...merge, 'If-Match': '*' },
    );
    expect(plantWithDeletes.body).toMatchObject({ error: 40027 });
    // A patch that changes nothing writes nothing: the ETag stays.
    const same = await documented(
      'updateWebhookEndpoint',
      'changer',
      'PATCH',
      path,
      {},
      { ...merge, 'If-Match': '*' },
    );
    expect(same.headers.get('etag')).toBe(changed.headers.get('etag'));
  });
});

describe('what an endpoint may be', () => {
  it.each([
    ['a body that is not an object', '[]', 40020],
    ['a description that is not a string', { url: 'http://127.0.0.1:9/', description: 7 }, 40020],
    ['a description too long', { url: 'http://127.0.0.1:9/', description: 'x'.repeat(257) }, 40020],
    // 257 characters as JSON Schema counts them (code points), 514 UTF-16 units.
    [
      'a description of 257 🌱',
      { url: 'http://127.0.0.1:9/', description: '🌱'.repeat(257) },
      40020,
    ],
    // A create's description is a string or absent: null removes one only in a PATCH.
    ['a null description', { url: 'http://127.0.0.1:9/', description: null }, 40020],
    ['no url', {}, 40021],
    ['a url that is not absolute', { url: '/hooks' }, 40021],
    ['a url that is a number', { url: 42 }, 40021],
    ['an ftp url', { url: 'ftp://hooks.example.com/' }, 40022],
    ['a javascript url', { url: 'javascript:alert(1)' }, 40022],
    ['user info', { url: 'http://user:pw@127.0.0.1:9/' }, 40023],
    ['the metadata service', { url: 'http://169.254.169.254/latest/meta-data/' }, 40024],
    ['the metadata service, in hex', { url: 'http://0xa9fea9fe/' }, 40024],
    ['the metadata service, as one number', { url: 'http://2852039166/' }, 40024],
    ['the metadata service, IPv4-mapped', { url: 'http://[::ffff:169.254.169.254]/' }, 40024],
    ['a private address', { url: 'http://10.0.0.1/' }, 40024],
    ['a shared address', { url: 'http://100.64.0.1/' }, 40024],
    ['a unique-local address', { url: 'http://[fd00::1]/' }, 40024],
    ['the unspecified address', { url: 'http://0.0.0.0:8080/' }, 40024],
    ['a multicast address', { url: 'http://224.0.0.1/' }, 40024],
    [
      'the Lambda runtime API',
      { url: 'http://127.0.0.1:9001/2018-06-01/runtime/invocation/next' },
      40024,
    ],
    ['a single-label name', { url: 'http://metadata/' }, 40024],
    ['a name that does not resolve', { url: 'https://plant-store.invalid/' }, 40025],
    ['an unknown event type', { url: 'http://127.0.0.1:9/', events: ['plant.eaten'] }, 40026],
    ['no event types', { url: 'http://127.0.0.1:9/', events: [] }, 40026],
    ['an unknown format', { url: 'http://127.0.0.1:9/', format: 'xml' }, 40027],
    [
      'the plant format with deletes',
      { url: 'http://127.0.0.1:9/', format: 'plant', events: ['plant.deleted'] },
      40027,
    ],
  ])('answers %s 400 with its code', async (_, body, code) => {
    const answer = await documented(
      'createWebhookEndpoint',
      'validator',
      'POST',
      '/webhook-endpoints',
      body,
    );
    expect([answer.status, answer.body.error]).toEqual([400, code]);
    expect(answer.body.message).not.toMatch(/Error:|at \S+:\d+/);
  });

  it('takes a description of 256 characters as JSON Schema counts them, however many UTF-16 units', async () => {
    const description = '🌱'.repeat(256);
    const created = await documented(
      'createWebhookEndpoint',
      'validator',
      'POST',
      '/webhook-endpoints',
      {
        url: 'http://127.0.0.1:9/',
        description,
      },
    );
    expect([created.status, created.body.description]).toEqual([201, description]);
    await documented(
      'deleteWebhookEndpoint',
      'validator',
      'DELETE',
      `/webhook-endpoints/${created.body.id}`,
    );
  });

  it('refuses a PATCH naming a member it cannot change, and a rotation body it does not take', async () => {
    const created = await documented(
      'createWebhookEndpoint',
      'strict',
      'POST',
      '/webhook-endpoints',
      {
        url: 'http://127.0.0.1:9/strict',
      },
    );
    const path = `/webhook-endpoints/${created.body.id}`;
    for (const patch of [{ id: 'ep_other' }, { description: 'x', secret: 'whsec_x' }]) {
      const answer = await documented('updateWebhookEndpoint', 'strict', 'PATCH', path, patch, {
        ...merge,
        'If-Match': '*',
      });
      expect([patch, answer.status, answer.body.error]).toEqual([patch, 400, 40020]);
    }
    for (const body of [[], { overlapSeconds: 0, revoke: true }]) {
      const answer = await documented(
        'rotateWebhookEndpointSecret',
        'strict',
        'POST',
        `${path}/secret/rotate`,
        body,
      );
      expect([body, answer.status, answer.body.error]).toEqual([body, 400, 40020]);
    }
    // Nothing changed: the description is as made, and the first secret still the one.
    const read = await documented('getWebhookEndpoint', 'strict', 'GET', path);
    expect(read.body.description).toBeUndefined();
    const secret = await documented('getWebhookEndpointSecret', 'strict', 'GET', `${path}/secret`);
    expect(secret.body.secret).toBe(created.body.secret);
  });

  it('stores nothing it refused', async () => {
    expect(
      (await documented('listWebhookEndpoints', 'validator', 'GET', '/webhook-endpoints')).body,
    ).toEqual([]);
  });

  it('refuses a recover whose since is not a time of the last 7 days', async () => {
    const created = await documented(
      'createWebhookEndpoint',
      'recoverer',
      'POST',
      '/webhook-endpoints',
      {
        url: 'http://127.0.0.1:9/',
      },
    );
    const path = `/webhook-endpoints/${created.body.id}/recover`;
    for (const since of [
      'yesterday',
      new Date(Date.now() + 3_600_000).toISOString(),
      new Date(Date.now() - 8 * 86_400_000).toISOString(),
      42,
    ]) {
      const answer = await documented('recoverWebhookEndpoint', 'recoverer', 'POST', path, {
        since,
      });
      expect([since, answer.body.error]).toEqual([since, 40028]);
    }
  });
});
