// `npm run seed -- --users N --orders-per-user M [--reset]`: bulk, realistic data.
//
// Rows go in through multi-row `INSERT … SELECT FROM unnest(arrays)` with bound parameters: one
// round trip per batch of thousands (times travel as epoch milliseconds, far cheaper to serialise). Creation times are spread over the past year and ids are
// minted for those times, so ids and created_at agree on order as they do for live rows.
import pg from 'pg';
import { ORDER_STATUSES } from '../db/entities/index.ts';
import { boundedClientOptions } from '../db/connections.ts';
import { idAt } from '../db/ids.ts';
import { messageOf } from '../guards.ts';
import { exitWithStartupFailure, start } from '../startup.ts';
import { COMMAND_LOG, commandLine, usageError } from './command-line.ts';
import { Progress } from './progress.ts';

const USAGE = 'usage: npm run seed -- --users N [--orders-per-user M] [--reset]';
const BATCH = 5_000;
const YEAR_MS = 365 * 24 * 3600 * 1000;

const FIRST = [
  'Ada',
  'Alan',
  'Grace',
  'Edsger',
  'Barbara',
  'Donald',
  'Margaret',
  'Ken',
  'Radia',
  'Tim',
  'Frances',
  'Linus',
  'Hedy',
  'John',
  'Katherine',
  'Dennis',
  'Sophie',
  'Niklaus',
  'Anita',
  'Leslie',
];
const LAST = [
  'Lovelace',
  'Turing',
  'Hopper',
  'Dijkstra',
  'Liskov',
  'Knuth',
  'Hamilton',
  'Thompson',
  'Perlman',
  'Berners-Lee',
  'Allen',
  'Torvalds',
  'Lamarr',
  'McCarthy',
  'Johnson',
  'Ritchie',
  'Wilson',
  'Wirth',
  'Borg',
  'Lamport',
];

function parse(): { users: number; ordersPerUser: number; reset: boolean } {
  const { values, positionals } = commandLine(USAGE, {
    users: { type: 'string' },
    'orders-per-user': { type: 'string', default: '0' },
    reset: { type: 'boolean', default: false },
  });
  if (positionals.length > 0) usageError(USAGE, `unexpected argument ${positionals[0]}`);
  // Number() would read '', 1e2 or 0x2 as numbers nobody meant to type.
  const whole = (text: string | undefined) => (text !== undefined && /^\d+$/.test(text) ? Number(text) : Number.NaN);
  const users = whole(values.users);
  const ordersPerUser = whole(values['orders-per-user']);
  if (
    !Number.isInteger(users) ||
    users < 0 ||
    users > 10_000_000 ||
    !Number.isInteger(ordersPerUser) ||
    ordersPerUser < 0 ||
    ordersPerUser > 1000
  ) {
    usageError(USAGE, '--users must be a whole number from 0 to 10,000,000, and --orders-per-user from 0 to 1,000');
  }
  return { users, ordersPerUser, reset: values.reset };
}

async function seed(client: pg.Client, users: number, ordersPerUser: number): Promise<void> {
  const run = Math.random().toString(36).slice(2, 8);
  const now = Date.now();
  const userStep = YEAR_MS / Math.max(users, 1);
  const userBar = new Progress('users', users);
  const orderBar = new Progress('orders', users * ordersPerUser);
  let orderColumns: [string[], string[], number[], string[], number[]] = [[], [], [], [], []];
  // One statement in flight while the next batch is generated: the database and Node work in parallel.
  let inFlight: Promise<unknown> = Promise.resolve();
  const send = async (sql: string, values: unknown[], bar: Progress, rows: number) => {
    await inFlight;
    inFlight = client.query(sql, values).then(() => bar.advance(rows));
  };
  const flushOrders = async () => {
    if (orderColumns[0].length === 0) return;
    const columns = orderColumns;
    orderColumns = [[], [], [], [], []];
    await send(
      `insert into orders (id, user_id, total, status, created_at)
       select id, user_id, total, status, to_timestamp(ms / 1000.0)
       from unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::bigint[]) as t(id, user_id, total, status, ms)`,
      columns,
      orderBar,
      columns[0].length,
    );
  };

  for (let from = 0; from < users; from += BATCH) {
    const ids: string[] = [];
    const names: string[] = [];
    const emails: string[] = [];
    const times: number[] = [];
    for (let i = from; i < Math.min(from + BATCH, users); i++) {
      const first = FIRST[i % FIRST.length]!;
      const last = LAST[Math.floor(i / FIRST.length) % LAST.length]!;
      const createdAt = new Date(now - YEAR_MS + Math.floor(i * userStep));
      const id = idAt('user', createdAt, i % 4096);
      ids.push(id);
      names.push(`${first} ${last}`);
      emails.push(`${first}.${last}.${run}${i}@example.com`.toLowerCase());
      times.push(createdAt.getTime());
      for (let o = 0; o < ordersPerUser; o++) {
        // Orders follow their user's creation, spaced within the rest of the year.
        const orderAt = new Date(createdAt.getTime() + Math.floor(((now - createdAt.getTime()) * (o + 1)) / (ordersPerUser + 1)));
        orderColumns[0].push(idAt('order', orderAt, (i * ordersPerUser + o) % 4096));
        orderColumns[1].push(id);
        orderColumns[2].push(100 + ((i * 7919 + o * 104729) % 99_900));
        orderColumns[3].push(ORDER_STATUSES[(i + o) % ORDER_STATUSES.length]!);
        orderColumns[4].push(orderAt.getTime());
      }
    }
    await send(
      `insert into users (id, name, email, created_at, updated_at)
       select id, name, email, to_timestamp(ms / 1000.0), to_timestamp(ms / 1000.0)
       from unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) as t(id, name, email, ms)`,
      [ids, names, emails, times],
      userBar,
      ids.length,
    );
    if (orderColumns[0].length >= BATCH * 4) await flushOrders();
  }
  await flushOrders();
  await inFlight;
}

const options = parse();
try {
  const { db } = await start({ migrate: true, ...COMMAND_LOG });
  // Bounded like every other connection: a lock held elsewhere, or a database gone silent, ends the
  // run after the statement time-out instead of leaving it waiting.
  const client = new pg.Client({ connectionString: db.url, ...boundedClientOptions(db.bounds) });
  // Reported below; an error event without a listener would end the process with a stack.
  client.on('error', () => undefined);
  try {
    await client.connect();
    if (options.reset) {
      // Recorded outcomes of writes vouch for rows that are about to go: a retry of their keys runs
      // anew. Events and their deliveries stay; they are what happened, and receivers may be owed them.
      await client.query('truncate users, orders, idempotency_keys');
      process.stderr.write('emptied users, orders and idempotency records\n');
    }
    const started = performance.now();
    await seed(client, options.users, options.ordersPerUser);
    await client.query('analyze users, orders');
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    process.stderr.write(`seeded ${options.users} users with ${options.ordersPerUser} orders each in ${seconds}s\n`);
  } catch (error) {
    process.stderr.write(
      `seeding stopped: ${messageOf(error).split('\n', 1)[0]}. What was written before stays; run again with --reset to start over.\n`,
    );
    process.exitCode = 1;
  } finally {
    await client.end().catch(() => undefined);
    await db.close();
  }
} catch (error) {
  exitWithStartupFailure(error);
}
