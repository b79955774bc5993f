// The floor the benchmark measures against: the SQL each scenario needs, sent with node-postgres
// from a bare node:http server, answered as JSON; no GraphQL, no keys, no limits. Usage:
// node bench/raw-pg-server.ts DATABASE_URL PORT POOL_MAX; prints "listening" when it serves.
import { createHash } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';
import { newId } from '../src/db/ids.ts';
import { shaped } from '../src/guards.ts';

const [url, port, poolMax] = process.argv.slice(2);
const pool = new pg.Pool({ connectionString: url, max: Number(poolMax) });

const USERS_PAGE = 'select id, name, email, created_at, updated_at from users order by created_at, id limit 21';
const NESTED = `
  select u.id, u.name, coalesce(o.orders, '[]') as orders
  from (select id, name, created_at from users order by created_at, id limit 20) u
  left join lateral (
    select json_agg(json_build_object('id', x.id, 'total', x.total)) as orders
    from (select id, total from orders where user_id = u.id order by created_at desc, id desc limit 5) x
  ) o on true
  order by u.created_at, u.id`;
const USER = 'select id, name, email from users where id = $1';
const CREATE_ORDER = `insert into orders (id, user_id, total, status, created_at) values ($1, $2, $3, 'pending', now()) returning id, total`;

/**
 * A creation under an Idempotency-Key, as the service makes it but with nothing around it: the key's
 * claim opens the transaction in one message with the insert, and its record goes in one message with
 * the COMMIT (the migrations' idempotency_claim and idempotency_keys). Two round trips, where the
 * write without a key takes one: what the key costs PostgreSQL and the driver at the least.
 */
async function createOrderOnce(key: string, body: string, order: { userId: string; total: number }): Promise<string> {
  const apiKeyId = await (firstApiKey ??= pool
    .query<{ id: string }>('select id from api_keys order by id limit 1')
    .then(({ rows }) => rows[0]!.id));
  const client = await pool.connect();
  const lit = (value: string | number) => (typeof value === 'number' ? String(value) : client.escapeLiteral(value));
  try {
    const results = await client.query<{ id: string; total: number }>(
      `begin; select idempotency_claim(${lit(apiKeyId)}, ${lit(key)});
       insert into orders (id, user_id, total, status, created_at) values (${lit(newId('order'))}, ${lit(order.userId)}, ${lit(order.total)}, 'pending', now()) returning id, total`,
    );
    // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- a text of three statements answers with a result each
    const answer = JSON.stringify((results as unknown as pg.QueryResult<{ id: string; total: number }>[])[2]!.rows[0]);
    const fingerprint = createHash('sha256').update(`POST /orders ${body}`).digest('hex');
    await client.query(
      `insert into idempotency_keys (api_key_id, key, fingerprint, status, headers, body, created_at, expires_at)
       values (${lit(apiKeyId)}, ${lit(key)}, ${lit(fingerprint)}, 200, '{"content-type":"application/json"}', ${lit(answer)}, now(), now() + interval '1 day');
       commit`,
    );
    return answer;
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
let firstApiKey: Promise<string> | undefined;

/** The order a request asks for; anything else is the load generator's mistake, answered with 500 like any failure. */
function orderOf(body: string): { userId: string; total: number } {
  const order = shaped(JSON.parse(body), { userId: 'string', total: 'number' });
  if (order) return { userId: order.userId, total: order.total };
  throw new Error(`not an order: ${body}`);
}

/** A body already in JSON. */
class Answered {
  readonly json: string;
  constructor(json: string) {
    this.json = json;
  }
}

async function answer(req: http.IncomingMessage): Promise<unknown> {
  const { pathname, searchParams } = new URL(req.url ?? '/', 'http://localhost');
  switch (pathname) {
    case '/users': {
      const { rows } = await pool.query(USERS_PAGE);
      return { data: rows.slice(0, 20), hasMore: rows.length > 20 };
    }
    case '/nested':
      return (await pool.query(NESTED)).rows;
    case '/user':
      return (await pool.query(USER, [searchParams.get('id')])).rows[0] ?? null;
    case '/orders': {
      let body = '';
      for await (const chunk of req) body += String(chunk);
      const { userId, total } = orderOf(body);
      const key = req.headers['idempotency-key'];
      if (typeof key === 'string') return new Answered(await createOrderOnce(key, body, { userId, total }));
      return (await pool.query(CREATE_ORDER, [newId('order'), userId, total])).rows[0];
    }
    default:
      throw new Error(`no such path: ${pathname}`);
  }
}

http
  .createServer((req, res) => {
    answer(req).then(
      (body) => res.writeHead(200, { 'content-type': 'application/json' }).end(body instanceof Answered ? body.json : JSON.stringify(body)),
      (error: unknown) => res.writeHead(500).end(String(error)),
    );
  })
  .listen(Number(port), '127.0.0.1', () => process.stdout.write('listening\n'));
