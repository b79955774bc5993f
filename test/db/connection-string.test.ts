// DATABASE_URL is read whole, as node-postgres reads a connection string, by every connection the
// service opens: the ORM's pool as much as the listener and the probes. The ORM on its own takes the
// host, port, user, password and database from the URL and drops the rest, so `sslmode`,
// `application_name` or `options` reached some connections and not others; an operator who asked for
// TLS could have the main pool talk in plain text.
import { expect, it } from 'vitest';
import { openOrm } from '../../src/db/orm.ts';
import { createLogger } from '../../src/log.ts';
import { createTestDatabase } from '../support/database.ts';
import { match } from '../support/match.ts';

it('opens the pool with every parameter of the URL (here application_name and options)', async () => {
  const database = await createTestDatabase();
  const url = new URL(database.url);
  url.searchParams.set('application_name', 'portico-probe');
  url.searchParams.set('options', '-c work_mem=7MB');
  const orm = await openOrm(url.toString(), { poolMax: 1, logger: createLogger('silent') });
  try {
    const [row] = await orm.em
      .fork()
      .execute<{ name: string; memory: string }[]>(
        "select current_setting('application_name') as name, current_setting('work_mem') as memory",
      );
    expect(row).toEqual({ name: 'portico-probe', memory: '7MB' });
  } finally {
    await orm.close(true);
    await database.drop();
  }
});

it('refuses to start with one sentence naming DATABASE_URL when it asks for TLS the server does not offer', async () => {
  const database = await createTestDatabase();
  const url = new URL(database.url);
  url.searchParams.set('sslmode', 'verify-full');
  try {
    await expect(openOrm(url.toString(), { poolMax: 1, logger: createLogger('silent') })).rejects.toThrow(
      match.objectContaining({ name: 'StartupError', message: match.stringMatching(/SSL.*DATABASE_URL/) }),
    );
  } finally {
    await database.drop();
  }
});
