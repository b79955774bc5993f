// The command-line tools, run as real processes against a database of their own.
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { createEmptyDatabase, createTestDatabase } from '../support/database.ts';
import pg from 'pg';

const drops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(drops.splice(0).map((drop) => drop()));
});

function run(script: string, args: string[], databaseUrl: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function query<T>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as T[];
  } finally {
    await client.end();
  }
}

describe('npm run db:migrate', () => {
  it('brings an empty database to the current schema', async () => {
    const database = await createEmptyDatabase();
    drops.push(database.drop);
    const result = await run('src/cli/db.ts', ['migrate'], database.url);
    expect(result.code, result.stderr).toBe(0);
    const tables = await query<{ table_name: string }>(
      database.url,
      "select table_name from information_schema.tables where table_schema = 'public' order by 1",
    );
    expect(tables.map((t) => t.table_name)).toEqual(['mikro_orm_migrations', 'orders', 'users']);
  });
});

describe('npm run seed', () => {
  it('loads users and orders whose ids agree with their creation order, and --reset empties first', async () => {
    const database = await createTestDatabase();
    drops.push(database.drop);
    const first = await run('src/cli/seed.ts', ['--users', '60', '--orders-per-user', '3'], database.url);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain('seeded 60 users');
    const again = await run('src/cli/seed.ts', ['--users', '40'], database.url);
    expect(again.code, again.stderr).toBe(0);
    expect(
      await query(database.url, 'select (select count(*)::int from users) as users, (select count(*)::int from orders) as orders'),
    ).toEqual([{ users: 100, orders: 180 }]);
    const disorder = await query<{ n: number }>(
      database.url,
      `select count(*)::int as n from (
         select created_at < lag(created_at) over (order by id collate "C") as out_of_order from users
         union all
         select created_at < lag(created_at) over (order by id collate "C") from orders
       ) t where out_of_order`,
    );
    expect(disorder).toEqual([{ n: 0 }]);
    const orphans = await query(
      database.url,
      'select count(*)::int as n from orders o join users u on u.id = o.user_id where o.created_at < u.created_at',
    );
    expect(orphans).toEqual([{ n: 0 }]);

    const reset = await run('src/cli/seed.ts', ['--users', '5', '--reset'], database.url);
    expect(reset.code, reset.stderr).toBe(0);
    expect(await query(database.url, 'select count(*)::int as n from users')).toEqual([{ n: 5 }]);
  });

  it('explains its usage when the arguments are wrong', async () => {
    for (const args of [['--users', 'many'], ['--bogus']]) {
      const result = await run('src/cli/seed.ts', args, 'postgres://unused@127.0.0.1:1/none');
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('usage: npm run seed');
    }
  });
});
