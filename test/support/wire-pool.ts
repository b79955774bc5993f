// A pool of one connection on a database of its own, noting the text of every statement as it goes
// to PostgreSQL, below whatever wrappers a test installs on it: what the wrappers send, message by
// message. One connection, so that a test sees what the previous borrower left on it.
import type pg from 'pg';
import { createTestDatabase, testPool } from './database.ts';

export interface WirePool {
  pool: pg.Pool;
  /** The texts that went to PostgreSQL, one per message. */
  sent: string[];
  close(): Promise<void>;
}

/** `wrap` installs the wrappers under test, after the note-taker, so that they sit above it. */
export async function wirePool(wrap: (pool: pg.Pool) => void): Promise<WirePool> {
  const database = await createTestDatabase();
  const pool = testPool({ connectionString: database.url, max: 1 });
  const sent: string[] = [];
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    client.query = ((...args: unknown[]) => {
      const [text] = args;
      sent.push(typeof text === 'string' ? text : String((text as { text?: string }).text));
      return query(...args);
    }) as typeof client.query;
  });
  wrap(pool);
  return {
    pool,
    sent,
    close: async () => {
      await pool.end();
      await database.drop();
    },
  };
}
