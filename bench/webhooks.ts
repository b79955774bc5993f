// Webhook delivery in the benchmark: how many deliveries a second one worker process makes to a local
// receiver that answers 200 at once, and how long an event takes from its write to the receiver at a
// steady 500 events a second. The receiver runs in the benchmark's process (the load generator's core);
// the worker is pinned with PostgreSQL and the servers.
import { spawn } from 'node:child_process';
import http from 'node:http';
import pg from 'pg';
import { newId } from '../src/db/ids.ts';
import { Sql } from '../src/db/sql.ts';
import { createLogger } from '../src/log.ts';
import { boundAddress } from '../src/net/bound-address.ts';
import { DeliveryNotifier } from '../src/webhooks/delivery-notifier.ts';
import { SecretBox } from '../src/webhooks/secret-box.ts';
import { newSigningSecret } from '../src/webhooks/signing-secret.ts';
import { withImageNodeOptions } from './image-node-options.ts';
import { quantile } from './load.ts';
import { childrenCpuMs, cpuMs, pinned } from './process-stats.ts';

const BACKLOG = Number(process.env.BENCH_WEBHOOK_BACKLOG ?? 20_000);
const STEADY_RATE = 500;
const STEADY_SECONDS = 10;

/** Events with a delivery each to one endpoint, `count` of them, in one statement. */
async function queueEvents(client: pg.Client | pg.Pool, endpointId: string, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, () => newId('event'));
  await client.query(
    `with event as (
       insert into events (id, type, created_at, data)
       select id, 'order.created', now(), '{"object":{"id":"ord_bench","total":1999,"status":"pending"}}'::jsonb from unnest($1::text[]) as id
       returning id)
     insert into webhook_deliveries (event_id, endpoint_id) select id, $2 from event`,
    [ids, endpointId],
  );
  return ids;
}

/**
 * Registers an endpoint at `url` subscribed to every event, as the API would, for the benchmark's key
 * (an endpoint whose keys are all gone is disabled by the service's upkeep); returns its id.
 */
export async function subscribeEndpoint(client: pg.Client | pg.Pool, env: NodeJS.ProcessEnv, url: string): Promise<string> {
  const endpointId = newId('webhookEndpoint');
  const box = new SecretBox(String(env.WEBHOOK_SECRET_KEY));
  await client.query(
    `insert into webhook_endpoints (id, owner_key_id, url, secret, created_at, updated_at)
     select $1, lineage_id, $2, $3, now(), now() from api_keys
     where revoked_at is null and (expires_at is null or expires_at > now()) order by created_at limit 1`,
    [endpointId, url, box.seal(newSigningSecret(), endpointId)],
  );
  return endpointId;
}

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('webhook benchmark: deliveries did not finish in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export async function webhookDelivery(
  databaseUrl: string,
  databasePid: number,
  env: NodeJS.ProcessEnv,
  root: string,
  core: number,
): Promise<string[]> {
  const arrived = new Map<string, number>();
  const receiver = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      arrived.set(String(request.headers['x-portico-event-id']), performance.now());
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${boundAddress(receiver).port}/hook`;
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  const endpointId = await subscribeEndpoint(pool, env, url);
  // The workers are woken as the API wakes them: after each write's commit, one notification at a time.
  const notifier = new DeliveryNotifier(new Sql(pool), createLogger('silent'));
  const succeeded = async () => {
    const { rows } = await pool.query<{ state: string; n: number }>(
      `select state, count(*)::int as n from webhook_deliveries where endpoint_id = $1 group by state`,
      [endpointId],
    );
    if (rows.some((row) => row.state === 'dead' || row.state === 'failed')) {
      const { rows: errors } = await pool.query<{ error: string }>(`select error from webhook_attempts where endpoint_id = $1 limit 1`, [
        endpointId,
      ]);
      throw new Error(`webhook benchmark: deliveries failed (${errors[0]?.error ?? 'no attempt recorded'})`);
    }
    return rows.find((row) => row.state === 'succeeded')?.n ?? 0;
  };

  await queueEvents(pool, endpointId, BACKLOG);
  const [file, args] = pinned(core, process.execPath, ['src/main.ts', 'worker']);
  const worker = spawn(file, args, {
    cwd: root,
    // Production delivers to https URLs only; the receiver here speaks plain http.
    env: { ...withImageNodeOptions(env, root), NODE_ENV: 'development', LOG_LEVEL: 'info', WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      worker.stdout.on('data', (chunk: Buffer) => chunk.includes('webhook worker started') && resolve());
      worker.once('exit', (code) => reject(new Error(`the webhook worker exited with ${code}`)));
    });
    // The backlog: from the moment the worker runs until the last delivery is recorded.
    const cpuBefore = cpuMs(worker.pid!);
    const databaseCpuBefore = childrenCpuMs(databasePid);
    const started = performance.now();
    // Progress is read at the receiver: counting the deliveries in the database every 20 ms took about a
    // third of PostgreSQL's share of the core from the worker being measured. The database is asked
    // once a second meanwhile (for failures), and at the end, until every outcome is recorded.
    let polls = 0;
    await until(async () => arrived.size >= BACKLOG || (++polls % 50 === 0 && (await succeeded()) === BACKLOG), 300_000);
    await until(async () => (await succeeded()) === BACKLOG, 300_000);
    const seconds = (performance.now() - started) / 1000;
    const cpuPerDeliveryUs = ((cpuMs(worker.pid!) - cpuBefore) * 1000) / BACKLOG;
    const databaseCpuPerDeliveryUs = ((childrenCpuMs(databasePid) - databaseCpuBefore) * 1000) / BACKLOG;

    // A steady stream: each event written on its own, as a write of the API would.
    const sentAt = new Map<string, number>();
    /** When each write's answer came: its commit, as the writer knows it. */
    const committedAt = new Map<string, number>();
    const writes: Promise<unknown>[] = [];
    const total = STEADY_RATE * STEADY_SECONDS;
    const begun = performance.now();
    for (let i = 0; i < total; i++) {
      const due = begun + (i * 1000) / STEADY_RATE;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
      const id = newId('event');
      sentAt.set(id, performance.now());
      writes.push(
        pool
          .query(
            `with event as (insert into events (id, type, created_at, data) values ($1, 'order.created', now(), '{"object":{}}'::jsonb) returning id)
           insert into webhook_deliveries (event_id, endpoint_id) select id, $2 from event`,
            [id, endpointId],
          )
          .then(() => {
            committedAt.set(id, performance.now());
            notifier.notify();
          }),
      );
    }
    await Promise.all(writes);
    await until(async () => [...sentAt.keys()].every((id) => arrived.has(id)), 60_000);
    const latencies = [...sentAt].map(([id, at]) => arrived.get(id)! - at);
    // The worker may claim a delivery (woken for an earlier one) before its writer has the answer: then it counts as 0.
    const fromCommit = [...committedAt].map(([id, at]) => Math.max(arrived.get(id)! - at, 0));
    const writeLatencies = [...committedAt].map(([id, at]) => at - sentAt.get(id)!);
    const achieved = total / ((Math.max(...sentAt.values()) - begun) / 1000);
    return [
      '## Webhook delivery',
      '',
      `One worker process (\`npm run worker\`, \`WEBHOOK_CONCURRENCY\` ${env.WEBHOOK_CONCURRENCY ?? 64}) delivering signed events to a receiver on the same machine`,
      'that answers 200 at once, every attempt recorded:',
      '',
      `- a backlog of ${BACKLOG.toLocaleString('en')} queued deliveries: ${Math.round(BACKLOG / seconds).toLocaleString('en')} deliveries/s (${seconds.toFixed(1)} s), ` +
        `${cpuPerDeliveryUs.toFixed(0)} µs of the worker's CPU and ${databaseCpuPerDeliveryUs.toFixed(0)} µs of PostgreSQL's per delivery;`,
      `- ${total.toLocaleString('en')} events written one by one at ${Math.round(achieved)} a second: from sending the write to the receiver, ` +
        `p50 ${quantile(latencies, 0.5).toFixed(1)} ms, p99 ${quantile(latencies, 0.99).toFixed(1)} ms; from its commit (the write's answer) to the receiver, ` +
        `p50 ${quantile(fromCommit, 0.5).toFixed(1)} ms, p99 ${quantile(fromCommit, 0.99).toFixed(1)} ms; the write itself took p50 ${quantile(writeLatencies, 0.5).toFixed(1)} ms, ` +
        `p99 ${quantile(writeLatencies, 0.99).toFixed(1)} ms.`,
      '',
    ];
  } finally {
    worker.kill('SIGTERM');
    await new Promise((resolve) => (worker.exitCode === null ? worker.once('exit', resolve) : resolve(undefined)));
    await pool.end();
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
}
