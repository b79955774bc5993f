// A webhook URL is checked by resolving its host, which a caller can make slow (a name server of its
// own that answers late). A registration with an Idempotency-Key holds its database connection from
// the start of its transaction, so without a bound a handful of such registrations held every
// connection of the pool, and every other client's requests waited and failed. Checks under way are
// bounded: one per API key, a quarter of the pool in all; past that, 503 at once.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { boundedFetch, eventually } from '../support/steady-load.ts';

let server: TestServer;
/** Host look-ups under way, each answered when the test lets it. */
const lookups: (() => void)[] = [];

beforeAll(async () => {
  server = await startTestServer(
    {},
    {
      resolveHosts: (host) =>
        new Promise((resolve) => {
          lookups.push(() => resolve(host === 'slow.example' ? ['93.184.216.34'] : []));
        }),
    },
  );
});
afterAll(async () => {
  for (const answer of lookups) answer();
  await server?.close();
});

function register(key: string, idempotencyKey: string) {
  return boundedFetch(
    `${server.url}/webhook-endpoints`,
    {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
      body: JSON.stringify({ url: 'http://slow.example/hook' }),
    },
    10_000,
  );
}

it('answers 503 at once past the bound on URL checks, and other clients are served meanwhile', async () => {
  const attacker = await server.createKey({ name: 'Slow names', scopes: ['webhooks:manage'] });
  const other = await server.createKey({ name: 'Another client', scopes: ['webhooks:manage'] });
  const held = register(attacker, 'first');
  await eventually(() => lookups.length === 1, 'the first registration is resolving its host', 5000);

  // More of the same key's, and another key's: refused at once, none of them waiting on a host.
  const refused = await Promise.all([...Array.from({ length: 6 }, (_, i) => register(attacker, `more-${i}`)), register(other, 'other')]);
  for (const answer of refused) {
    expect(answer.status).toBe(503);
    expect(answer.headers?.get('retry-after')).toBe('2');
    expect((answer.body as { type: string }).type).toBe('https://portico.dev/problems/unavailable');
  }
  expect(lookups.length).toBe(1);

  // Every other client is served meanwhile.
  const users = await boundedFetch(`${server.url}/users`, { headers: { 'x-api-key': server.apiKey } }, 5000);
  expect(users.status).toBe(200);

  // The host answers: the registration completes, and the next one may check its URL.
  lookups[0]!();
  expect((await held).status).toBe(201);
  const next = register(other, 'other');
  await eventually(() => lookups.length === 2, 'the next registration is resolving its host', 5000);
  lookups[1]!();
  expect((await next).status).toBe(201);
});
