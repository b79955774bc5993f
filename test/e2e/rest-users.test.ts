import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { match } from '../support/match.ts';
import { expectProblem, rest, type User } from '../support/rest.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const UNKNOWN = 'usr_01jd3x3b8vfb9s1p4t4p6q2k7m';
let counter = 0;
const call = <T = unknown>(method: string, path: string, options?: Parameters<typeof rest>[3]) => rest<T>(server, method, path, options);

async function createUser(): Promise<User> {
  counter += 1;
  const response = await call<User>('POST', '/users', { json: { name: `Rest User ${counter}`, email: `rest-${counter}@example.com` } });
  expect(response.status).toBe(201);
  return response.body;
}

describe('POST /users', () => {
  it('creates the user: 201, Location in the header, the user in the body', async () => {
    const response = await call<User>('POST', '/users', { json: { name: 'Grace Hopper', email: 'grace@example.com' } });
    expect(response.status).toBe(201);
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(response.body).toEqual({
      id: match.stringMatching(/^usr_/),
      name: 'Grace Hopper',
      email: 'grace@example.com',
      createdAt: match.any(String),
      updatedAt: match.any(String),
    });
    expect(response.headers.get('location')).toBe(`/users/${response.body.id}`);
    const fetched = await call<User>('GET', response.headers.get('location')!);
    expect(fetched.body).toEqual(response.body);
  });

  it.each([
    ['a missing field', { name: 'No Email' }, 'email'],
    ['a wrong type', { name: 42, email: 'typed@example.com' }, 'name'],
    ['an invalid email', { name: 'Bad', email: 'nope' }, 'email'],
    ['an id (mass assignment)', { name: 'Sneaky', email: 'sneaky@example.com', id: UNKNOWN }, 'id'],
    ['a createdAt (mass assignment)', { name: 'Sneaky', email: 'sneaky2@example.com', createdAt: '2020-01-01T00:00:00Z' }, 'createdAt'],
    ['an unknown field', { name: 'Extra', email: 'extra@example.com', admin: true }, 'admin'],
  ])('refuses %s with 400 naming the field, and stores nothing', async (_, json, field) => {
    const before = await call<{ pagination: { total: number } }>('GET', '/users?page=1');
    const problem = expectProblem(await call('POST', '/users', { json }), 400, 'invalid-input', '/users');
    expect(problem.errors?.map((e) => e.field)).toEqual([field]);
    const after = await call<{ pagination: { total: number } }>('GET', '/users?page=1');
    expect(after.body.pagination.total).toBe(before.body.pagination.total);
  });

  it.each([
    ['malformed JSON', '{"name": "Half', 'body'],
    ['an array', '[]', 'body'],
    ['a string', '"just text"', 'body'],
    ['an empty body', '', 'body'],
  ])('refuses %s with 400', async (_, body, field) => {
    const problem = expectProblem(await call('POST', '/users', { body }), 400, 'invalid-input', '/users');
    expect(problem.errors?.[0]?.field).toBe(field);
  });

  it('refuses a body that is not JSON with 415, and one without a content type', async () => {
    expectProblem(
      await call('POST', '/users', { body: 'name=x', contentType: 'application/x-www-form-urlencoded' }),
      415,
      'unsupported-media-type',
      '/users',
    );
    const bare = await server.fetch(`/users`, { method: 'POST', body: new Uint8Array([123, 125]) });
    expect(bare.status).toBe(415);
  });

  it('refuses a JSON body in another charset than UTF-8 with 415, and reads UTF-8 however it is named', async () => {
    const text = JSON.stringify({ name: 'Zoë', email: 'charset@example.com' });
    const latin = await server.fetch('/users', {
      method: 'POST',
      headers: { 'x-api-key': server.apiKey, 'content-type': 'application/json; charset=iso-8859-1' },
      body: Buffer.from(text, 'latin1'),
    });
    const latinText = await latin.text();
    const problem = expectProblem(
      { status: latin.status, headers: latin.headers, text: latinText, body: JSON.parse(latinText) },
      415,
      'unsupported-media-type',
      '/users',
    );
    expect(problem.detail).toMatch(/UTF-8, not iso-8859-1/);
    const utf8 = await server.fetch('/users', {
      method: 'POST',
      headers: { 'x-api-key': server.apiKey, 'content-type': 'application/json; Charset="UTF-8"' },
      body: text,
    });
    expect(utf8.status).toBe(201);
    expect(await utf8.json()).toMatchObject({ name: 'Zoë', email: 'charset@example.com' });
  });

  it('refuses a body over 64 KiB with 413', async () => {
    const json = { name: 'Big', email: 'big@example.com', padding: 'x'.repeat(70_000) };
    expectProblem(await call('POST', '/users', { json }), 413, 'payload-too-large', '/users');
  });

  it('refuses fields sent as query parameters', async () => {
    const problem = expectProblem(
      await call('POST', '/users?input=%7B%7D', { json: { name: 'Q', email: 'q@example.com' } }),
      400,
      'invalid-input',
      '/users',
    );
    expect(problem.errors?.[0]?.field).toBe('input');
  });

  it('answers a duplicate email with 409, and exactly one of many concurrent creates wins', async () => {
    await createUser();
    const duplicate = await call('POST', '/users', { json: { name: 'Again', email: `REST-${counter}@EXAMPLE.com` } });
    expectProblem(duplicate, 409, 'conflict', '/users');
    const racers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => call('POST', '/users', { json: { name: `Racer ${i}`, email: 'race@example.com' } })),
    );
    expect(racers.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
  });

  it('takes an address in any letter case as the same address, ß and SS too, on creation and on update', async () => {
    const created = await call<User>('POST', '/users', { json: { name: 'Straße', email: 'straße@example.de' } });
    expect(created.status).toBe(201);
    const taken = expectProblem(
      await call('POST', '/users', { json: { name: 'Strasse', email: 'STRASSE@EXAMPLE.DE' } }),
      409,
      'conflict',
      '/users',
    );
    // The field, for a client's form to point at, as a refused input names its fields.
    expect(taken.errors).toEqual([{ field: 'email', message: 'is taken by another user' }]);
    const other = await createUser();
    const moved = await call('PATCH', `/users/${other.id}`, { json: { email: 'Strasse@example.de' } });
    expectProblem(moved, 409, 'conflict', `/users/${other.id}`);
    expect((await call<User>('GET', `/users/${other.id}`)).body.email).toBe(other.email);
  });
});

describe('conditional writes', () => {
  it('refuses a write on a precondition the service cannot evaluate (it sends no validators) with 412, and applies nothing', async () => {
    const user = await createUser();
    const path = `/users/${user.id}`;
    const patch = (headers: Record<string, string>) =>
      call('PATCH', path, { json: { name: 'Changed' }, contentType: 'application/merge-patch+json', headers });
    for (const [name, value] of [
      ['if-match', '"stale-tag"'],
      ['if-match', 'W/"weak", "strong"'],
      ['if-unmodified-since', 'Sat, 01 Jan 2000 00:00:00 GMT'],
      ['if-none-match', '*'],
    ] as const) {
      const refused = await patch({ [name]: value });
      expectProblem(refused, 412, 'precondition-failed', path);
      // Refused after the key was checked: the answer says where its budget stands, as every other does.
      expect(refused.headers.get('ratelimit-policy')).toMatch(/^"per-key";q=\d+;w=\d+$/);
      expect(refused.headers.get('ratelimit')).toMatch(/^"per-key";r=\d+;t=\d+$/);
    }
    expectProblem(await call('DELETE', path, { headers: { 'if-match': '"stale-tag"' } }), 412, 'precondition-failed', path);
    expect((await call<User>('GET', path)).body).toEqual(user);
    // What can hold without a tag of ours does: any current representation, none of the tags named.
    expect((await patch({ 'if-match': '*' })).status).toBe(200);
    expect((await patch({ 'if-none-match': '"some-tag"' })).status).toBe(200);
  });
});

describe('emails whose folded letter case is canonically the same', () => {
  it('takes ΐ and Ϊ́ (Greek letters that upper-case to a sequence NFC writes otherwise) as one address', async () => {
    for (const [first, second] of [
      ['\u0390x@example.gr', '\u03aa\u0301x@example.gr'],
      ['\u03b0y@example.gr', '\u03ab\u0301y@example.gr'],
    ]) {
      expect((await call('POST', '/users', { json: { name: 'Greek', email: first } })).status).toBe(201);
      expectProblem(await call('POST', '/users', { json: { name: 'Greek', email: second } }), 409, 'conflict', '/users');
    }
  });
});

describe('GET /users/{user_id}', () => {
  it('returns the user; 404 for an unknown id; 400 for a malformed one', async () => {
    const user = await createUser();
    const found = await call<User>('GET', `/users/${user.id}`);
    expect([found.status, found.body]).toEqual([200, user]);
    expectProblem(await call('GET', `/users/${UNKNOWN}`), 404, 'not-found', `/users/${UNKNOWN}`);
    const malformed = expectProblem(await call('GET', '/users/42'), 400, 'invalid-input', '/users/42');
    expect(malformed.errors).toEqual([{ field: 'user_id', message: match.stringContaining('usr_') }]);
  });

  it('decodes a percent-encoded id exactly once, and refuses malformed escapes with 400', async () => {
    const user = await createUser();
    const encoded = `%${user.id.charCodeAt(0).toString(16)}${user.id.slice(1)}`;
    expect((await call<User>('GET', `/users/${encoded}`)).body).toEqual(user);
    // Encoded twice, it decodes (once) to "%75sr_…", which is no id.
    const twice = `%25${encoded.slice(1)}`;
    expectProblem(await call('GET', `/users/${twice}`), 400, 'invalid-input', `/users/${twice}`);
    expectProblem(await call('POST', `/users/${twice}/orders`, { json: { total: 1 } }), 400, 'invalid-input', `/users/${twice}/orders`);
    expectProblem(await call('GET', '/users/%E0%A4%A'), 400, 'invalid-input', '/users/%E0%A4%A');
  });

  it('answers HEAD like GET, without a body but with its length', async () => {
    const user = await createUser();
    const response = await server.fetch(`/users/${user.id}`, { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    const get = await server.fetch(`/users/${user.id}`);
    expect(response.headers.get('content-length')).toBe(get.headers.get('content-length'));
    expect(Number(response.headers.get('content-length'))).toBe(Buffer.byteLength(await get.text()));
  });

  it('returns the same user as GraphQL does', async () => {
    const user = await createUser();
    const viaRest = await call<User>('GET', `/users/${user.id}`);
    const viaGraphQL = await server.gql<{ user: User }>('query ($id: ID!) { user(id: $id) { id name email createdAt updatedAt } }', {
      id: user.id,
    });
    expect(viaRest.body).toEqual(viaGraphQL.body.data!.user);
  });
});

describe('PUT /users/{user_id}', () => {
  it('replaces every writable field', async () => {
    const user = await createUser();
    const response = await call<User>('PUT', `/users/${user.id}`, { json: { name: 'Replaced', email: `replaced-${user.id}@example.com` } });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      id: user.id,
      name: 'Replaced',
      email: `replaced-${user.id}@example.com`,
      createdAt: user.createdAt,
    });
  });

  it('requires every writable field (400), refuses unknown users (404) and taken emails (409)', async () => {
    const user = await createUser();
    const other = await createUser();
    const missing = expectProblem(
      await call('PUT', `/users/${user.id}`, { json: { name: 'Only Name' } }),
      400,
      'invalid-input',
      `/users/${user.id}`,
    );
    expect(missing.errors).toEqual([{ field: 'email', message: 'is required' }]);
    expectProblem(
      await call('PUT', `/users/${UNKNOWN}`, { json: { name: 'X', email: 'x@example.com' } }),
      404,
      'not-found',
      `/users/${UNKNOWN}`,
    );
    expectProblem(
      await call('PUT', `/users/${user.id}`, { json: { name: 'X', email: other.email } }),
      409,
      'conflict',
      `/users/${user.id}`,
    );
  });
});

describe('PATCH /users/{user_id}', () => {
  it.each(['application/merge-patch+json', 'application/json'])('changes only the fields sent as %s', async (contentType) => {
    const user = await createUser();
    const response = await call<User>('PATCH', `/users/${user.id}`, { json: { name: 'Patched' }, contentType });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: user.id, name: 'Patched', email: user.email });
  });

  it('refuses null for a field that cannot be empty, other media types (415 with Accept-Patch), and unknown users', async () => {
    const user = await createUser();
    const nulled = expectProblem(
      await call('PATCH', `/users/${user.id}`, { json: { email: null } }),
      400,
      'invalid-input',
      `/users/${user.id}`,
    );
    expect(nulled.errors).toEqual([{ field: 'email', message: 'cannot be null' }]);
    const wrongType = await call('PATCH', `/users/${user.id}`, { body: 'name=x', contentType: 'text/plain' });
    expectProblem(wrongType, 415, 'unsupported-media-type', `/users/${user.id}`);
    expect(wrongType.headers.get('accept-patch')).toContain('application/merge-patch+json');
    expectProblem(await call('PATCH', `/users/${UNKNOWN}`, { json: { name: 'X' } }), 404, 'not-found', `/users/${UNKNOWN}`);
    expect((await call<User>('GET', `/users/${user.id}`)).body).toEqual(user);
  });
});

describe('every input error at once, in the API’s own words', () => {
  const problems = async (method: string, path: string, options: Parameters<typeof rest>[3]) =>
    expectProblem(await call(method, path, options), 400, 'invalid-input', path.split('?')[0]!).errors;

  it('names every missing, mistyped and unknown field of a body together', async () => {
    expect(await problems('POST', '/users', { json: {} })).toEqual([
      { field: 'name', message: 'is required' },
      { field: 'email', message: 'is required' },
    ]);
    expect(await problems('POST', '/users', { json: { name: 5, email: true } })).toEqual([
      { field: 'name', message: 'must be a string' },
      { field: 'email', message: 'must be a string' },
    ]);
    expect(await problems('POST', '/users', { json: { colour: 'red', size: 2, name: null } })).toEqual([
      { field: 'colour', message: 'is not a field that can be set' },
      { field: 'size', message: 'is not a field that can be set' },
      { field: 'name', message: 'cannot be null' },
      { field: 'email', message: 'is required' },
    ]);
    const user = await createUser();
    expect(await problems('POST', `/users/${user.id}/orders`, { json: { total: 3_000_000_000, status: 5 } })).toEqual([
      { field: 'total', message: 'must be a whole number from 0 to 2147483647' },
      { field: 'status', message: 'must be a string' },
    ]);
    expect(await problems('PUT', `/users/${user.id}`, { json: { name: null } })).toEqual([
      { field: 'name', message: 'cannot be null' },
      { field: 'email', message: 'is required' },
    ]);
  });

  it('names every bad query parameter together, with what is allowed', async () => {
    expect(await problems('GET', '/users?limit=abc&page=0&colour=blue', undefined)).toEqual([
      { field: 'limit', message: 'must be a whole number from 1 to 100' },
      { field: 'page', message: 'must be a whole number from 1 to 10000' },
      { field: 'colour', message: 'is not a parameter of this operation' },
    ]);
  });

  it('leaves GraphQL variables to GraphQL’s standard coercion errors, coded BAD_USER_INPUT', async () => {
    const response = await server.gql('mutation ($input: CreateUserInput!) { createUser(input: $input) { id } }', { input: { name: 5 } });
    expect(response.status).toBe(400);
    expect(response.body.errors!.map((error) => [error.extensions.code, error.message])).toEqual([
      ['BAD_USER_INPUT', 'Variable "$input" got invalid value 5 at "input.name"; String cannot represent a non string value: 5'],
      ['BAD_USER_INPUT', 'Variable "$input" got invalid value { name: 5 }; Field "email" of required type "String!" was not provided.'],
    ]);
  });
});

describe('DELETE /users/{user_id}', () => {
  it('answers 204 with no body and no Content-Type; a second DELETE is 404', async () => {
    const user = await createUser();
    const response = await server.fetch(`/users/${user.id}`, { method: 'DELETE' });
    expect(response.status).toBe(204);
    expect(response.headers.get('content-type')).toBeNull();
    expect(await response.text()).toBe('');
    expectProblem(await call('GET', `/users/${user.id}`), 404, 'not-found', `/users/${user.id}`);
    expectProblem(await call('DELETE', `/users/${user.id}`), 404, 'not-found', `/users/${user.id}`);
  });

  it('refuses a body it would otherwise ignore, deleting nothing; an empty body or {} is no body', async () => {
    const user = await createUser();
    for (const [body, contentType] of [
      ['{bad json', 'application/json'],
      ['{"x": 1}', 'application/json'],
      ['hello', 'text/plain'],
    ]) {
      const refused = await rest(server, 'DELETE', `/users/${user.id}`, { body, contentType });
      const problem = expectProblem(refused, 400, 'invalid-input', `/users/${user.id}`);
      expect(problem.errors).toEqual([{ field: 'body', message: 'must be empty: this operation takes no body' }]);
    }
    expect((await call('GET', `/users/${user.id}`)).status).toBe(200);
    expect((await rest(server, 'DELETE', `/users/${user.id}`, { body: '{}' })).status).toBe(204);
  });
});

describe('paths and methods', () => {
  it.each([
    ['DELETE', '/users', 'GET, POST, HEAD, OPTIONS'],
    ['POST', '/users/usr_01jd3x3b8vfb9s1p4t4p6q2k7m', 'GET, PUT, PATCH, DELETE, HEAD, OPTIONS'],
    ['PUT', '/users/usr_01jd3x3b8vfb9s1p4t4p6q2k7m/orders', 'GET, POST, HEAD, OPTIONS'],
    ['DELETE', '/orders/ord_01jd3x5kq2f6r0w8c4n1y7s9ta', 'GET, HEAD, OPTIONS'],
  ])('%s %s is 405 with Allow: %s', async (method, path, allow) => {
    const response = await call(method, path);
    expectProblem(response, 405, 'method-not-allowed', path);
    expect(response.headers.get('allow')).toBe(allow);
  });

  it('never echoes an API key put in the path, in the instance or the detail of its problem', async () => {
    for (const path of [`/users/${server.apiKey}`, `/nowhere/${server.apiKey}`, `/users/${server.apiKey}/orders`]) {
      const response = await call('GET', path);
      expect(response.status, path).toBeGreaterThanOrEqual(400);
      expect(response.text, path).not.toContain(server.apiKey);
      expect(response.text, path).toContain(`${server.apiKey.slice(0, 16)}…`);
    }
  });

  it.each(['/nowhere', '/users/x/y', '/webhook', '/create-order', '/create-user', '/user'])('%s is 404', async (path) => {
    expectProblem(await call('POST', path, { json: {} }), 404, 'not-found', path);
    expectProblem(await call('GET', path), 404, 'not-found', path);
  });
});

describe('unexpected failures', () => {
  it('are 500 Problem Details with no internals, logged with the request id', async () => {
    const user = await createUser();
    await server.orm.em.fork().execute('alter table orders rename to orders_gone');
    try {
      const response = await call('GET', `/users/${user.id}/orders`, { headers: { 'x-request-id': 'rest-broken-1' } });
      const problem = expectProblem(response, 500, 'internal', `/users/${user.id}/orders`);
      expect(problem.detail).not.toMatch(/orders_gone|relation|select/i);
      expect(response.text).not.toMatch(/orders_gone|relation|select|stack/i);
      expect(server.logs.some((line) => line.requestId === 'rest-broken-1' && line.level === 50)).toBe(true);
    } finally {
      await server.orm.em.fork().execute('alter table orders_gone rename to orders');
    }
  });
});
