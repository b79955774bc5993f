// A rolling upgrade: another instance's migration changes a table's shape under statements this one
// prepared on its connections. PostgreSQL then refuses to run them again there; the request is a
// retryable 503, never a 500, and the connection is given up so that the next request runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe('a table changing shape under prepared statements', () => {
  it('answers 503 with Retry-After on the connections that had prepared them, then serves again', async () => {
    const created = await server.fetch('/users', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Shape', email: 'shape@example.com' }),
    });
    const { id } = (await created.json()) as { id: string };
    for (let i = 0; i < 3; i += 1) expect((await server.fetch(`/users/${id}`)).status).toBe(200);

    // As a migration of the next version would: the read's result type changes.
    await server.orm.em.fork().execute(`alter table users alter column name type varchar(300)`);

    const statuses: number[] = [];
    for (let i = 0; i < 20 && statuses.at(-1) !== 200; i += 1) {
      const response = await server.fetch(`/users/${id}`);
      statuses.push(response.status);
      if (response.status === 503) {
        expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
        expect(((await response.json()) as { type: string }).type).toBe('https://portico.dev/problems/unavailable');
      } else await response.arrayBuffer();
    }
    expect(statuses).toContain(503);
    expect(statuses.filter((status) => status !== 503 && status !== 200)).toEqual([]);
    expect(statuses.at(-1)).toBe(200);
    // Not an outage: nothing else is refused for it.
    const ready = (await (await fetch(`${server.url}/ready`)).json()) as { database: { outages: number } };
    expect(ready.database.outages).toBe(0);
  });
});
