// A fresh test database reached through a TCP proxy of the file's own, for tests that cut
// PostgreSQL off from one connection or pool without touching the others of the run.
import { afterAll, beforeAll, inject } from 'vitest';
import { createTestDatabase } from './database.ts';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.ts';

export interface ProxiedDatabase {
  /** The proxy in front of PostgreSQL: `set` a fault, then back to 'pass'. */
  readonly proxy: TcpProxy;
  /** The database's URL through the proxy. */
  readonly url: string;
  /** The database's own URL, past the proxy. */
  readonly directUrl: string;
}

/** Set up before the file's tests and removed after them; read its fields inside a test. */
export function proxiedTestDatabase(): ProxiedDatabase {
  let proxy: TcpProxy | undefined;
  let database: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
    const admin = new URL(inject('adminUrl'));
    proxy = await startTcpProxy({ host: admin.hostname, port: Number(admin.port || 5432) });
  });
  afterAll(async () => {
    await proxy?.close();
    await database?.drop();
  });
  const ready = () => {
    if (!proxy || !database) throw new Error('the proxied database is set up before the tests run');
    return { proxy, database };
  };
  return {
    get proxy() {
      return ready().proxy;
    },
    get url() {
      const { proxy: own, database: db } = ready();
      return own.proxiedUrl(db.url);
    },
    get directUrl() {
      return ready().database.url;
    },
  };
}
