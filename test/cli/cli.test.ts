// The command-line tools, run as real processes against a database of their own.
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { createEmptyDatabase, createTestDatabase } from '../support/database.ts';
import { match } from '../support/match.ts';
import { jwtVerify } from 'jose';
import pg from 'pg';

/** An instant as the API writes it: ISO 8601 in UTC with milliseconds. */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const drops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(drops.splice(0).map((drop) => drop()));
});

const PEPPER = 'a-pepper-of-at-least-thirty-two-characters';

function run(
  script: string,
  args: string[],
  databaseUrl: string,
  moreEnv: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // Every secret given, so no command writes one into the working copy's data folder.
    const env = {
      ...process.env,
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'warn',
      API_KEY_PEPPER: PEPPER,
      CURSOR_SECRET: 'a-cursor-secret-of-at-least-thirty-two-characters',
      WEBHOOK_SECRET_KEY: 'a-webhook-key-of-at-least-thirty-two-characters',
      ...moreEnv,
    };
    const child = spawn(process.execPath, [script, ...args], { env });
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

/** Runs `work` on a database of its own while another session holds `table` locked. */
async function whileLocked<T>(table: string, work: (url: string) => Promise<T>): Promise<T> {
  const database = await createTestDatabase();
  drops.push(database.drop);
  const holder = new pg.Client({ connectionString: database.url });
  await holder.connect();
  try {
    await holder.query('begin');
    await holder.query(`lock table ${table} in access exclusive mode`);
    return await work(database.url);
  } finally {
    await holder.end();
  }
}

describe('npm run db:migrate', () => {
  it('brings an empty database to the current schema', async () => {
    const database = await createEmptyDatabase();
    drops.push(database.drop);
    const result = await run('src/cli/db.ts', ['migrate'], database.url);
    expect(result.code, result.stderr).toBe(0);
    // Plain text, like every command; --json for machines.
    expect(result.stdout).toMatch(/^the database at postgres:\/\/.* is up to date\n$/);
    expect(result.stdout).not.toContain(':secret@');
    expect(JSON.parse((await run('src/cli/db.ts', ['migrate', '--json'], database.url)).stdout)).toMatchObject({ upToDate: true });
    const tables = await query<{ table_name: string }>(
      database.url,
      "select table_name from information_schema.tables where table_schema = 'public' order by 1",
    );
    expect(tables.map((t) => t.table_name)).toEqual([
      'api_key_usage',
      'api_keys',
      'events',
      'idempotency_keys',
      'mikro_orm_migrations',
      'orders',
      'users',
      'webhook_attempts',
      'webhook_deliveries',
      'webhook_endpoints',
    ]);
  });
});

describe('what a command writes where', () => {
  it('logs on stderr, so that its --json answer on stdout parses, and names its database without a password anywhere in its URL', async () => {
    const database = await createEmptyDatabase();
    drops.push(database.drop);
    // The credentials in the query string, where libpq and node-postgres take them too.
    const url = new URL(database.url);
    const password = decodeURIComponent(url.password);
    const inQuery = new URL(`postgres://${url.host}${url.pathname}`);
    inQuery.searchParams.set('user', decodeURIComponent(url.username));
    inQuery.searchParams.set('password', password);
    // At info, the migrations it applies are logged.
    const result = await run('src/cli/db.ts', ['migrate', '--json'], inQuery.toString(), { LOG_LEVEL: 'info' });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ upToDate: true });
    expect(result.stderr).toContain('migration applied');
    const plain = await run('src/cli/db.ts', ['migrate'], inQuery.toString());
    expect(plain.stdout).toMatch(/^the database at postgres:\/\/.* is up to date\n$/);
    expect([result.stdout, result.stderr, plain.stdout, plain.stderr].filter((text) => text.includes(password))).toEqual([]);
  });
});

describe('npm run seed', () => {
  it('gives up on a table locked elsewhere after the statement time-out, in one sentence', async () => {
    const result = await whileLocked('users', (url) =>
      run('src/cli/seed.ts', ['--users', '10', '--reset'], url, { DB_STATEMENT_TIMEOUT_MS: '300' }),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^seeding stopped: canceling statement due to statement timeout\. /);
    expect(result.stderr).not.toMatch(/\bat .*\.(ts|js):\d+/);
  });

  it('loads users and orders whose ids agree with their creation order, and --reset empties them and the idempotency records first', async () => {
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

    // A write's recorded outcome vouches for rows the reset removes: a retry of its key must run anew.
    const key = JSON.parse(
      (await run('src/cli/keys.ts', ['create', '--name', 'writer', '--scopes', 'orders:write', '--json'], database.url)).stdout,
    ) as { id: string };
    await query(
      database.url,
      `insert into idempotency_keys (api_key_id, key, fingerprint, status, headers, body, created_at, expires_at)
       values ('${key.id}', 'retry-me', 'f', 201, '{}', '{}', now(), now() + interval '1 day')`,
    );
    const reset = await run('src/cli/seed.ts', ['--users', '5', '--reset'], database.url);
    expect(reset.code, reset.stderr).toBe(0);
    expect(
      await query(
        database.url,
        'select (select count(*)::int from users) as users, (select count(*)::int from idempotency_keys) as records',
      ),
    ).toEqual([{ users: 5, records: 0 }]);
  });

  it('explains its usage when the arguments are wrong', async () => {
    for (const args of [['--users', 'many'], ['--bogus']]) {
      const result = await run('src/cli/seed.ts', args, 'postgres://unused@127.0.0.1:1/none');
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('usage: npm run seed');
    }
  });
});

describe('a command the database lets down midway', () => {
  it('says so in one sentence, with exit status 1', async () => {
    const result = await whileLocked('api_keys', (url) => run('src/cli/keys.ts', ['list'], url, { DB_STATEMENT_TIMEOUT_MS: '300' }));
    expect([result.code, result.stderr]).toEqual([
      1,
      match.stringMatching(/^The database did not finish a statement within DB_STATEMENT_TIMEOUT_MS .*\n$/),
    ]);
  });
});

describe('npm run keys', () => {
  interface Listed {
    id: string;
    key: string;
    secret?: string;
    scopes: string[];
    allowedCidrs: string[];
    expiresAt: string | null;
    revokedAt: string | null;
    rotatedFromId: string | null;
  }

  it('creates, lists, rotates and revokes keys, showing each secret once', async () => {
    const database = await createTestDatabase();
    drops.push(database.drop);
    const keys = (...args: string[]) => run('src/cli/keys.ts', args, database.url);

    const created = await keys(
      'create',
      '--name',
      'Shop',
      '--scopes',
      'users:read,orders:write',
      '--allow-ip',
      '10.0.0.0/8',
      '--expires',
      '30d',
      '--json',
    );
    expect(created.code, created.stderr).toBe(0);
    const key = JSON.parse(created.stdout) as Listed;
    expect(key.secret).toMatch(/^pk_test_[0-9A-Za-z]{33}$/);
    expect(key).toMatchObject({
      scopes: ['users:read', 'orders:write'],
      allowedCidrs: ['10.0.0.0/8'],
      key: `${key.secret!.slice(0, 16)}…`,
    });
    expect(Date.parse(key.expiresAt!)).toBeGreaterThan(Date.now() + 29 * 86_400_000);

    const rotated = await keys('rotate', key.id, '--grace', '1h', '--json');
    expect(rotated.code, rotated.stderr).toBe(0);
    const successor = JSON.parse(rotated.stdout) as Listed & { previous: Listed };
    expect(successor).toMatchObject({ rotatedFromId: key.id, scopes: key.scopes });
    expect(successor.secret).not.toBe(key.secret);
    expect(Date.parse(successor.previous.expiresAt!)).toBeLessThanOrEqual(Date.now() + 3_600_000);
    // The successor is given the old key's lifetime again, from now: rotating is how a key is renewed.
    expect(Date.parse(successor.expiresAt!)).toBeGreaterThan(Date.parse(key.expiresAt!));
    expect(Date.parse(successor.expiresAt!)).toBeGreaterThan(Date.now() + 29.9 * 86_400_000);
    // A key already replaced is not rotated again: a second successor would end with the first one's grace.
    const again = await keys('rotate', key.id, '--grace', '1h');
    expect([again.code, again.stderr.trim()]).toEqual([
      1,
      `API key ${key.id} was already rotated to ${successor.id}; rotate that key instead.`,
    ]);
    const renewed = JSON.parse((await keys('rotate', successor.id, '--expires', '90d', '--json')).stdout) as Listed;
    expect(Date.parse(renewed.expiresAt!)).toBeGreaterThan(Date.now() + 89.9 * 86_400_000);

    const revoked = await keys('revoke', successor.id, '--json');
    expect(revoked.code, revoked.stderr).toBe(0);
    expect((JSON.parse(revoked.stdout) as Listed).revokedAt).not.toBeNull();

    const listed = await keys('list', '--json');
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as Listed[]).map((k) => k.id)).toEqual([key.id, successor.id, renewed.id]);
    for (const secret of [key.secret!, successor.secret!]) expect(listed.stdout).not.toContain(secret.slice(16));
    const human = await keys('list');
    expect(human.stdout).toContain('revoked');
    expect(human.stdout).not.toContain(key.secret!.slice(16));

    await query(
      database.url,
      `insert into api_key_usage values ('${key.id}', current_date, 'Query.user', 7), ('${key.id}', current_date - 40, 'Query.user', 1)`,
    );
    const usage = await keys('usage', key.id, '--json');
    expect(usage.code, usage.stderr).toBe(0);
    expect(JSON.parse(usage.stdout)).toMatchObject({ id: key.id, total: 7, rows: [{ operation: 'Query.user', requests: 7 }] });
  });

  it('explains what is wrong with a command', async () => {
    const database = await createTestDatabase();
    drops.push(database.drop);
    for (const args of [
      [],
      ['bogus'],
      ['create', '--name', 'x'],
      ['revoke'],
      ['create', '--name', 'x', '--scopes', 'admin', '--expires', 'soon'],
      ['create', '--name', 'x', '--scopes', 'admin', 'extra'],
      ['revoke', 'key_01jd3x3b8vfb9s1p4t4p6q2k7m', 'extra'],
      // A flag the command does not take is not ignored: the operator would believe it applied.
      ['revoke', 'key_01jd3x3b8vfb9s1p4t4p6q2k7m', '--expires', '30d'],
      ['rotate', 'key_01jd3x3b8vfb9s1p4t4p6q2k7m', '--rate-limit', '9'],
      ['list', '--days', '3'],
      ['usage', 'key_01jd3x3b8vfb9s1p4t4p6q2k7m', '--grace', '1h'],
      ['create', '--name', 'x', '--scopes', 'admin', '--rate-limit', '0x10'],
      ['create', '--name', 'x', '--scopes', 'admin', '--rate-limit', '1e3'],
    ]) {
      const result = await run('src/cli/keys.ts', args, database.url);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toContain('usage: npm run keys');
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
    // Values the service refuses, each named by its flag: a budget past what the service counts, a
    // name with a line break (it would break the list's table apart).
    for (const [flag, args, said] of [
      ['--rate-limit', ['--name', 'x', '--rate-limit', '3000000000'], 'must be a whole number from 1 to 1000000000'],
      ['--name', ['--name', 'a\nb'], 'must not contain control characters'],
    ] as const) {
      const refused = await run('src/cli/keys.ts', ['create', '--scopes', 'admin', ...args], database.url);
      expect([refused.code, refused.stderr.split('\n')[0]], flag).toEqual([2, match.stringMatching(new RegExp(`^${flag} ${said}`))]);
      expect(refused.stderr).not.toMatch(/\n\s+at /);
    }
    // A rotation's grace is bounded: the old key is to go.
    const lasting = await run('src/cli/keys.ts', ['rotate', 'key_01jd3x3b8vfb9s1p4t4p6q2k7m', '--grace', '1000d'], database.url);
    expect([lasting.code, lasting.stderr.split('\n')[0]]).toEqual([2, '--grace must be at most 30d: the old key is to go, not to stay']);
    // Values the service refuses are mistakes too, named by their flag, with the usage.
    const invalid = await run('src/cli/keys.ts', ['create', '--name', 'x', '--scopes', 'root'], database.url);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('--scopes');
    expect(invalid.stderr).toContain('"root" is not one of');
    expect(invalid.stderr).toContain('usage: npm run keys');
    const unknown = await run('src/cli/keys.ts', ['revoke', 'key_01jd3x3b8vfb9s1p4t4p6q2k7m'], database.url);
    expect([unknown.code, unknown.stderr.trim()]).toEqual([1, 'No API key has the id key_01jd3x3b8vfb9s1p4t4p6q2k7m.']);
    // Eighteen commands, each a process of its own: about 15 s on an idle machine, twice that on a busy one.
  }, 90_000);
});

describe('npm run webhooks', () => {
  interface Listed {
    id: string;
    url: string;
    events: string[] | null;
    enabled: boolean;
    secret?: string;
    previousSecretExpiresAt: string | null;
  }

  it('creates, lists, updates, rotates and deletes endpoints, showing each secret once', async () => {
    const database = await createTestDatabase();
    drops.push(database.drop);
    const keys = (...args: string[]) => run('src/cli/keys.ts', args, database.url);
    const webhooks = (...args: string[]) => run('src/cli/webhooks.ts', args, database.url);
    const key = JSON.parse((await keys('create', '--name', 'Shop', '--scopes', 'webhooks:manage', '--json')).stdout) as { id: string };

    const created = await webhooks(
      'create',
      '--key',
      key.id,
      '--url',
      'https://93.184.216.34/hooks',
      '--events',
      'order.created,USER_DELETED',
      '--json',
    );
    expect(created.code, created.stderr).toBe(0);
    const endpoint = JSON.parse(created.stdout) as Listed;
    expect(endpoint).toMatchObject({ url: 'https://93.184.216.34/hooks', events: ['ORDER_CREATED', 'USER_DELETED'], enabled: true });
    expect(endpoint.secret).toMatch(/^whsec_/);
    const [ping] = await query<{ type: string }>(
      database.url,
      `select e.type from webhook_deliveries d join events e on e.id = d.event_id where d.endpoint_id = '${endpoint.id}'`,
    );
    expect(ping).toEqual({ type: 'ping' });

    const updated = await webhooks('update', endpoint.id, '--events', 'all', '--disable', '--json');
    expect(updated.code, updated.stderr).toBe(0);
    expect(JSON.parse(updated.stdout)).toMatchObject({ events: null, enabled: false });

    const rotated = await webhooks('rotate', endpoint.id, '--overlap', '1h', '--json');
    expect(rotated.code, rotated.stderr).toBe(0);
    const after = JSON.parse(rotated.stdout) as Listed;
    expect(after.secret).toMatch(/^whsec_/);
    expect(after.secret).not.toBe(endpoint.secret);
    expect(Date.parse(after.previousSecretExpiresAt!)).toBeLessThanOrEqual(Date.now() + 3_600_000);

    const listed = await webhooks('list', '--key', key.id, '--json');
    expect((JSON.parse(listed.stdout) as Listed[]).map((e) => [e.id, e.secret])).toEqual([[endpoint.id, null]]);
    const human = await webhooks('list');
    expect(human.stdout).toContain(`${endpoint.id}  disabled  https://93.184.216.34/hooks  [all events]`);
    expect(human.stdout).not.toContain('whsec_');

    // The ping, as if every attempt had failed: the dead-letter queue.
    await query(database.url, `update webhook_deliveries set state = 'dead', finished_at = now() where endpoint_id = '${endpoint.id}'`);
    const dead = await webhooks('deliveries', endpoint.id, '--status', 'dead', '--json');
    expect(dead.code, dead.stderr).toBe(0);
    const [deadPing] = JSON.parse(dead.stdout) as { eventId: string; eventType: string; status: string }[];
    expect(deadPing).toMatchObject({ eventType: 'ping', status: 'dead' });
    // Instants as every face writes them (ISO 8601), as the API answers them.
    expect(deadPing).toMatchObject({ createdAt: match.stringMatching(ISO_INSTANT), finishedAt: match.stringMatching(ISO_INSTANT) });
    expect(JSON.parse((await webhooks('resend-dead', endpoint.id, '--json')).stdout)).toEqual({ queued: 1, remaining: 0 });
    const resent = await webhooks('resend', endpoint.id, deadPing!.eventId, '--json');
    expect([resent.code, (JSON.parse(resent.stdout) as { status: string }).status]).toEqual([0, 'pending']);
    expect((await webhooks('deliveries', endpoint.id)).stdout).toContain(`${deadPing!.eventId}  ping`);

    expect((await webhooks('delete', endpoint.id)).code).toBe(0);
    expect((await webhooks('list')).stdout.trim()).toBe('no webhook endpoints');
  });

  it('explains what is wrong with a command', async () => {
    const database = await createTestDatabase();
    drops.push(database.drop);
    for (const args of [
      [],
      ['bogus'],
      ['create', '--url', 'https://93.184.216.34/'],
      ['rotate'],
      ['rotate', 'wep_x', '--overlap', 'soon'],
      ['delete', 'wep_x', '--events', 'all'],
      ['update', 'wep_x', '--overlap', '1h'],
      // Nothing to change.
      ['update', 'wep_x'],
    ]) {
      const result = await run('src/cli/webhooks.ts', args, database.url);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toContain('usage: npm run webhooks');
    }
    const unknownKey = await run(
      'src/cli/webhooks.ts',
      ['create', '--key', 'key_01jd3x3b8vfb9s1p4t4p6q2k7m', '--url', 'https://93.184.216.34/'],
      database.url,
    );
    expect([unknownKey.code, unknownKey.stderr]).toEqual([
      1,
      match.stringContaining('No API key has the id key_01jd3x3b8vfb9s1p4t4p6q2k7m'),
    ]);
    const malformed = await run('src/cli/webhooks.ts', ['create', '--key', 'garbage', '--url', 'https://93.184.216.34/'], database.url);
    expect([malformed.code, malformed.stderr.split('\n')[0]]).toEqual([2, match.stringMatching(/^--key must be an API key id like key_/)]);
    const key = JSON.parse(
      (await run('src/cli/keys.ts', ['create', '--name', 'x', '--scopes', 'webhooks:manage', '--json'], database.url)).stdout,
    ) as {
      id: string;
    };
    const hostile = await run('src/cli/webhooks.ts', ['create', '--key', key.id, '--url', 'http://169.254.169.254/'], database.url);
    expect([hostile.code, hostile.stderr.split('\n')[0]]).toEqual([2, match.stringMatching(/^--url .*link-local/)]);
    // A revoked key could never manage the endpoint it would own.
    expect((await run('src/cli/keys.ts', ['revoke', key.id], database.url)).code).toBe(0);
    const revoked = await run('src/cli/webhooks.ts', ['create', '--key', key.id, '--url', 'https://93.184.216.34/'], database.url);
    expect([revoked.code, revoked.stderr]).toEqual([1, match.stringContaining('is revoked or expired')]);
    expect(await query<{ n: number }>(database.url, 'select count(*)::int as n from webhook_endpoints')).toEqual([{ n: 0 }]);
  });
});

describe('npm run token', () => {
  it('signs a development user token the service accepts, for a user that exists', async () => {
    const database = await createTestDatabase();
    drops.push(database.drop);
    const secret = 'a-jwt-secret-of-at-least-thirty-two-characters';
    const userId = 'usr_01jd3x3b8vfb9s1p4t4p6q2k7m';
    await query(
      database.url,
      `insert into users (id, name, email, created_at, updated_at) values ('${userId}', 'Ada', 'ada-token@example.com', now(), now())`,
    );
    const token = (...args: string[]) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, ['src/cli/token.ts', ...args], {
          env: { ...process.env, JWT_SECRET: secret, DATABASE_URL: database.url, LOG_LEVEL: 'warn' },
        });
        let [stdout, stderr] = ['', ''];
        child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      });
    const result = await token(userId, '--expires', '5m');
    expect(result.code, result.stderr).toBe(0);
    const { payload } = await jwtVerify(result.stdout.trim(), new TextEncoder().encode(secret), {
      issuer: 'portico-dev',
      audience: 'portico',
    });
    expect(payload.sub).toBe(userId);
    expect(payload.exp! - Date.now() / 1000).toBeLessThanOrEqual(300);
    // Each mistake said in words, naming what was typed.
    expect(await token()).toMatchObject({ code: 2, stderr: match.stringContaining('the id of the user the token speaks for is required') });
    expect(await token('not-a-user')).toMatchObject({ code: 2, stderr: match.stringContaining('not-a-user is not a user id') });
    expect(await token(userId, '--expires', 'soon')).toMatchObject({
      code: 2,
      stderr: match.stringContaining('--expires takes a duration'),
    });
    expect(await token(userId, '--expires', '2d')).toMatchObject({ code: 2, stderr: match.stringContaining('longer than JWT_MAX_AGE') });
    expect(await token('usr_01jd3x3b8vfb9s1p4t4p6q2k7n')).toMatchObject({
      code: 1,
      stderr: 'No user has the id usr_01jd3x3b8vfb9s1p4t4p6q2k7n.\n',
    });
  });
});

describe('every command explains itself', () => {
  const COMMANDS = [
    'src/cli/keys.ts',
    'src/cli/webhooks.ts',
    'src/cli/seed.ts',
    'src/cli/token.ts',
    'src/cli/db.ts',
    'src/cli/schema-print.ts',
  ];

  it('prints its usage for --help (on a subcommand too) and exits 0', async () => {
    for (const command of COMMANDS) {
      for (const args of [['--help'], ['create', '-h']]) {
        const result = await run(command, args, 'postgres://unused@127.0.0.1:1/none');
        expect([result.code, result.stdout.startsWith('usage:')], `${command} ${args.join(' ')}`).toEqual([0, true]);
      }
    }
  });

  it('reads a flag given no value as a mistake, never as a request for help, numbers only as written, and lifetimes within bounds', async () => {
    const unused = 'postgres://unused@127.0.0.1:1/none';
    for (const args of [
      ['create', '--name', '--scopes', 'admin'],
      ['create', '--name', '-h', '--scopes', 'admin'],
    ]) {
      const result = await run('src/cli/keys.ts', args, unused);
      expect([result.code, result.stderr.split('\n')[0]], args.join(' ')).toEqual([2, match.stringMatching(/^--name needs a value/)]);
    }
    for (const expires of ['1ms', '59s', '3651d']) {
      const result = await run('src/cli/keys.ts', ['create', '--name', 'k', '--scopes', 'admin', '--expires', expires], unused);
      expect([result.code, result.stderr.split('\n')[0]], expires).toEqual([2, `--expires must be from 1m to 3650d (got ${expires})`]);
    }
    for (const users of ['', '1e2', '0x2']) {
      const result = await run('src/cli/seed.ts', ['--users', users], unused);
      expect(result.code, users).toBe(2);
    }
  });

  it('refuses an argument it does not take, rather than ignore it (a second id, a flag without its dashes)', async () => {
    const unused = 'postgres://unused@127.0.0.1:1/none';
    for (const [command, args] of [
      ['src/cli/webhooks.ts', ['delete', 'wep_01jd3x3b8vfb9s1p4t4p6q2k7m', 'wep_01jd3x3b8vfb9s1p4t4p6q2k7n']],
      ['src/cli/webhooks.ts', ['list', 'extra']],
      ['src/cli/schema-print.ts', ['check']],
      ['src/main.ts', ['api', 'extra']],
    ] as const) {
      const result = await run(command, [...args], unused);
      expect([result.code, result.stderr.split('\n')[0]], `${command} ${args.join(' ')}`).toEqual([
        2,
        match.stringContaining('unexpected argument'),
      ]);
    }
    for (const args of [['--help'], ['api', '--help']]) {
      const help = await run('src/main.ts', args, unused);
      expect([help.code, help.stdout.startsWith('usage:')], args.join(' ')).toEqual([0, true]);
    }
  });

  it('refuses unknown flags and wrong values in plain words, naming the flag as typed; reads negative numbers as numbers', async () => {
    const database = await createTestDatabase();
    drops.push(database.drop);
    const unknown = await run('src/cli/keys.ts', ['list', '--colour'], database.url);
    expect([unknown.code, unknown.stderr.split('\n')[0]]).toEqual([2, 'unknown option --colour']);
    const missing = await run('src/cli/keys.ts', ['create', '--name'], database.url);
    expect([missing.code, missing.stderr.split('\n')[0]]).toEqual([2, '--name needs a value']);
    // A flag of one value given twice: the last would have won silently. One that lists (--allow-ip) may repeat.
    const twice = await run('src/cli/keys.ts', ['create', '--name', 'x', '--name', 'y', '--scopes', 'users:read', '--json'], database.url);
    expect([twice.code, twice.stderr.split('\n')[0]]).toEqual([2, '--name is given twice; give it once']);
    const listed = await run(
      'src/cli/keys.ts',
      ['create', '--name', 'z', '--scopes', 'users:read', '--allow-ip', '10.0.0.0/8', '--allow-ip', '192.0.2.0/24', '--json'],
      database.url,
    );
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as { allowedCidrs: string[] }).allowedCidrs).toEqual(['10.0.0.0/8', '192.0.2.0/24']);
    // A value the service refuses is a mistake too: named by its flag, then the usage, status 2.
    const negative = await run('src/cli/keys.ts', ['create', '--name', 'x', '--scopes', 'admin', '--rate-limit', '-5'], database.url);
    expect([negative.code, negative.stderr.split('\n')[0]]).toEqual([2, '--rate-limit must be a whole number from 1 to 1000000000']);
    expect(negative.stderr).toContain('usage: npm run keys');
    const overlap = await run('src/cli/webhooks.ts', ['rotate', 'wep_01jd3x3b8vfb9s1p4t4p6q2k7m', '--overlap', '8d'], database.url);
    // Said in the flag's own terms (a duration), not the API's seconds.
    expect([overlap.code, overlap.stderr.split('\n')[0]]).toEqual([
      2,
      '--overlap must be a duration from 0s to 7d in whole seconds (got 8d)',
    ]);
    const usage = await run('src/cli/keys.ts', ['usage', 'key_01jd3x3b8vfb9s1p4t4p6q2k7m'], database.url);
    expect([usage.code, usage.stderr]).toEqual([1, 'No API key has the id key_01jd3x3b8vfb9s1p4t4p6q2k7m.\n']);
  });

  it('lists keys as a table with a header, and says when the checked-in schema is current', async () => {
    const database = await createTestDatabase();
    drops.push(database.drop);
    const created = JSON.parse(
      (await run('src/cli/keys.ts', ['create', '--name', 'Shop', '--scopes', 'users:read', '--rate-limit', '120', '--json'], database.url))
        .stdout,
    ) as {
      id: string;
      rateLimit: number | null;
    };
    // Its own budget: operations per rate limit window, whatever RATE_LIMIT_WINDOW_MS makes that.
    expect(created.rateLimit).toBe(120);
    await run('src/cli/keys.ts', ['rotate', created.id, '--grace', '1h'], database.url);
    const [header, ...rows] = (await run('src/cli/keys.ts', ['list'], database.url)).stdout.trim().split('\n');
    expect(header!.split(/\s{2,}/)).toEqual(['NAME', 'ID', 'PREFIX', 'SCOPES', 'RATE LIMIT', 'STATE', 'EXPIRES', 'LAST USED']);
    expect(rows.find((row) => row.includes(created.id))).toMatch(/ 120 .*rotating until \d{4}-/);
    const check = await run('src/cli/schema-print.ts', ['--check'], database.url);
    expect([check.code, check.stdout]).toEqual([0, 'schema/schema.graphql and schema/openapi.json are up to date\n']);
  });
});
