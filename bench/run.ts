// `npm run bench`: seeds a throw-away embedded PostgreSQL, starts the service as its own process and
// measures GraphQL scenarios over HTTP from this one. Prints a table and rewrites bench/report.md.
// Sizes come from BENCH_USERS (default 100000), BENCH_REQUESTS (2000) and BENCH_CONCURRENCY (16).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres.ts';
import { openOrm } from '../src/db/orm.ts';
import { createLogger } from '../src/log.ts';
import { generateKeySecret } from '../src/services/api-key-secrets.ts';
import { ApiKeyVerifier } from '../src/services/api-key-verifier.ts';
import { MemoryCounter, type RateLimitCounter } from '../src/rate-limit/counter.ts';
import { RedisCounter } from '../src/rate-limit/redis-counter.ts';
// The same private redis-server the tests start (a real server on a free loopback port).
import { REDIS_SERVER_PATH, startTestRedis } from '../test/support/redis.ts';

const USERS = Number(process.env.BENCH_USERS ?? 100_000);
const ORDERS_PER_USER = 10;
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);

interface Scenario {
  name: string;
  /** A GraphQL request body, or a REST `GET` path. */
  request: (i: number) => { query: string; variables?: Record<string, unknown> } | string;
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The key every benchmark request sends, issued through the CLI like an operator would; its rate limit is out of reach. */
let apiKey = '';

async function issueKey(env: NodeJS.ProcessEnv): Promise<string> {
  const child = spawn(
    process.execPath,
    ['src/cli/keys.ts', 'create', '--name', 'Benchmark', '--scopes', 'admin', '--rate-limit', '1000000000', '--json'],
    {
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error('creating the benchmark key failed');
  return (JSON.parse(out) as { secret: string }).secret;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; done: Promise<number | null> } {
  const child = spawn(command, args, { env, stdio: ['ignore', 'ignore', 'inherit'] });
  return { child, done: new Promise((resolve) => child.on('exit', resolve)) };
}

async function waitForReady(url: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const ok = await fetch(`${url}/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the service did not become ready');
}

async function gql(url: string, body: object): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
    body: JSON.stringify(body),
  });
  const json = (await response.json()) as { data?: Record<string, unknown>; errors?: unknown[] };
  if (!response.ok || json.errors) throw new Error(`request failed: ${JSON.stringify(json.errors ?? response.status)}`);
  return json.data!;
}

async function restGet(url: string, path: string): Promise<void> {
  const response = await fetch(`${url}${path}`, { headers: { 'x-api-key': apiKey } });
  if (!response.ok) throw new Error(`GET ${path} failed: ${response.status} ${await response.text()}`);
  await response.arrayBuffer();
}

/** Mean cost of verifying an API key that is already in the verifier's cache, and of refusing an unknown one. */
async function keyChecks(databaseUrl: string, pepper: string): Promise<{ warmUs: number; unknownUs: number }> {
  const orm = await openOrm(databaseUrl, { poolMax: 1, logger: createLogger('warn') });
  const verifier = new ApiKeyVerifier(() => orm.em.fork(), pepper, { ttlMs: 3_600_000, maxEntries: 10 });
  try {
    await verifier.start();
    if (!(await verifier.verify(apiKey))) throw new Error('the benchmark key does not verify');
    const rounds = 100_000;
    let started = performance.now();
    for (let i = 0; i < rounds; i++) await verifier.verify(apiKey);
    const warmUs = ((performance.now() - started) * 1000) / rounds;
    const strangers = Array.from({ length: rounds }, () => generateKeySecret('test').secret);
    started = performance.now();
    for (const stranger of strangers) if (await verifier.verify(stranger)) throw new Error('a random key verified');
    return { warmUs, unknownUs: ((performance.now() - started) * 1000) / rounds };
  } finally {
    verifier.stop();
    await orm.close();
  }
}

/** Mean cost of one rate limit budget check, one after another (for Redis: a round trip each). */
async function budgetCheck(counter: RateLimitCounter): Promise<number> {
  const rounds = 20_000;
  const started = performance.now();
  for (let i = 0; i < rounds; i++) await counter.consume('bench', 1, 1_000_000_000, 60_000);
  const micros = ((performance.now() - started) * 1000) / rounds;
  await counter.close();
  return micros;
}

/** The Redis check on a private redis-server, when one is installed. */
async function redisBudgetCheck(): Promise<number | undefined> {
  if (!REDIS_SERVER_PATH) return undefined;
  const redis = await startTestRedis();
  try {
    const counter = new RedisCounter(redis.url, { commandTimeoutMs: 1000, onConnectionError: () => undefined });
    if (!(await counter.waitUntilReady(5000))) throw new Error('the benchmark Redis did not answer');
    return await budgetCheck(counter);
  } finally {
    await redis.stop();
  }
}

/** Requests per second of the random-key flood (bench/key-flood.ts). */
const FLOOD_RATE = Number(process.env.BENCH_FLOOD_RATE ?? 200);

/** Starts the flood in a process of its own, once it sends; `stop` ends it and says how many were sent and refused. */
async function startKeyFlood(url: string): Promise<{ stop(): Promise<{ sent: number; refused: number }> }> {
  const child = spawn(process.execPath, ['bench/key-flood.ts', url, String(FLOOD_RATE)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const sending = new Promise<void>((resolve) =>
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.startsWith('sending\n')) resolve();
    }),
  );
  const exited = new Promise((resolve) => child.on('exit', resolve));
  await sending;
  return {
    async stop() {
      child.kill('SIGTERM');
      await exited;
      return JSON.parse(out.slice('sending\n'.length)) as { sent: number; refused: number };
    },
  };
}

interface Run {
  requests: number;
  seconds: number;
  latencies: number[];
}

async function load(url: string, scenario: Scenario, requests = REQUESTS): Promise<Run> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < requests) {
        const i = next++;
        const t0 = performance.now();
        const request = scenario.request(i);
        await (typeof request === 'string' ? restGet(url, request) : gql(url, request));
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { requests, seconds: (performance.now() - started) / 1000, latencies };
}

/** A table row for one or more runs of a scenario, taken together. */
function row(name: string, runs: Run[]): string {
  const latencies = runs.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const perSecond = runs.reduce((sum, r) => sum + r.requests, 0) / runs.reduce((sum, r) => sum + r.seconds, 0);
  const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!.toFixed(1);
  return `| ${name} | ${Math.round(perSecond)} | ${at(0.5)} | ${at(0.95)} | ${at(0.99)} |`;
}

async function measure(url: string, scenario: Scenario): Promise<string> {
  return row(scenario.name, [await load(url, scenario)]);
}

/** CPU time (user and system) a process has used so far, in ms, from /proc (Linux). */
function serviceCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime are fields 14 and 15 of the line, counted in clock ticks of 10 ms.
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Rounds of the flood comparison: runs with and without the flood alternate, so that both meet the same machine. */
const FLOOD_ROUNDS = 4;

const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'portico-bench-'));
await fs.chmod(dataDir, 0o755);
const database = await startEmbeddedPostgres(dataDir, createLogger('warn'));
let server: ChildProcess | undefined;
try {
  const pepper = randomBytes(32).toString('hex');
  const env = {
    ...process.env,
    DATABASE_URL: database.url(),
    LOG_LEVEL: 'warn',
    DATA_DIR: dataDir,
    API_KEY_PEPPER: pepper,
    // The flood below must reach key verification, not stop at the per-address limit.
    RATE_LIMIT_UNIDENTIFIED: '1000000000',
  };
  apiKey = await issueKey(env);
  const seedStarted = performance.now();
  const seed = run(process.execPath, ['src/cli/seed.ts', '--users', String(USERS), '--orders-per-user', String(ORDERS_PER_USER)], env);
  if ((await seed.done) !== 0) throw new Error('seeding failed');
  const seedSeconds = (performance.now() - seedStarted) / 1000;

  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const api = run(process.execPath, ['src/main.ts', 'api'], { ...env, PORT: String(port), HOST: '127.0.0.1' });
  server = api.child;
  await waitForReady(url);

  // Inputs for the scenarios: real ids and cursors, gathered by walking the first pages.
  const ids: string[] = [];
  const cursors: (string | null)[] = [null];
  for (let page = 0; page < 50; page++) {
    const data = (
      await gql(url, {
        query: 'query ($after: String) { users(first: 100, after: $after) { edges { node { id } } pageInfo { endCursor } } }',
        variables: { after: cursors.at(-1) },
      })
    ).users as { edges: { node: { id: string } }[]; pageInfo: { endCursor: string | null } };
    ids.push(...data.edges.map((e) => e.node.id));
    if (!data.pageInfo.endCursor) break;
    cursors.push(data.pageInfo.endCursor);
  }
  const pick = <T>(list: T[], i: number) => list[(i * 7919) % list.length]!;

  const scenarios: Scenario[] = [
    {
      name: '`user(id)`',
      request: (i) => ({ query: 'query ($id: ID!) { user(id: $id) { id name email } }', variables: { id: pick(ids, i) } }),
    },
    {
      name: '`users(first: 20)` with `orders(limit: 5)` each',
      request: (i) => ({
        query: 'query ($after: String) { users(first: 20, after: $after) { edges { node { id orders(limit: 5) { id total } } } } }',
        variables: { after: pick(cursors, i) },
      }),
    },
    {
      name: '`orders(userId)`',
      request: (i) => ({ query: 'query ($id: ID!) { orders(userId: $id) { id total status } }', variables: { id: pick(ids, i) } }),
    },
    { name: 'REST `GET /users/{user_id}`', request: (i) => `/users/${pick(ids, i)}` },
    { name: 'REST `GET /users?limit=20&sort=name`', request: () => '/users?limit=20&sort=name' },
    { name: 'REST `GET /users/{user_id}/orders`', request: (i) => `/users/${pick(ids, i)}/orders` },
    {
      name: '`createOrder`',
      request: (i) => ({
        query: 'mutation ($input: CreateOrderInput!) { createOrder(input: $input) { id } }',
        variables: { input: { userId: pick(ids, i), total: 1000 + i } },
      }),
    },
  ];

  const rows: string[] = [];
  for (const scenario of scenarios) rows.push(await measure(url, scenario));
  // The same valid-key reads while strangers try random keys, which must cost no database work.
  const keyed = scenarios.find((scenario) => scenario.name === 'REST `GET /users/{user_id}`')!;
  // Wall-clock throughput on a shared 2-core machine is noisy; the service's own CPU time per request
  // is the steadier figure, so both are reported.
  const quiet: Run[] = [];
  const flooded: Run[] = [];
  let quietCpuMs = 0;
  let floodedCpuMs = 0;
  let floodRequests = 0;
  for (let round = 0; round < FLOOD_ROUNDS; round++) {
    let cpu = serviceCpuMs(server.pid!);
    quiet.push(await load(url, keyed));
    quietCpuMs += serviceCpuMs(server.pid!) - cpu;
    const flood = await startKeyFlood(url);
    cpu = serviceCpuMs(server.pid!);
    flooded.push(await load(url, keyed));
    floodedCpuMs += serviceCpuMs(server.pid!) - cpu;
    const { sent, refused } = await flood.stop();
    if (refused !== sent) throw new Error(`the flood was not refused: ${refused} of ${sent}`);
    floodRequests += sent;
  }
  rows.push(row(`${keyed.name}, ${FLOOD_ROUNDS} runs alternating with those below`, quiet));
  rows.push(row(`${keyed.name} during a flood of ${FLOOD_RATE} random keys/s, ${FLOOD_ROUNDS} runs`, flooded));
  const validRequests = FLOOD_ROUNDS * REQUESTS;
  const cpuPerValidUs = (quietCpuMs * 1000) / validRequests;
  const cpuPerRefusalUs = ((floodedCpuMs - quietCpuMs) * 1000) / floodRequests;
  const keyCheck = await keyChecks(database.url(), pepper);
  const memoryBudgetUs = await budgetCheck(new MemoryCounter(60_000));
  const redisBudgetUs = await redisBudgetCheck();
  const budgets =
    `A rate limit budget check takes ${memoryBudgetUs.toFixed(2)} µs in memory` +
    (redisBudgetUs === undefined
      ? ' (no redis-server to measure the Redis one).'
      : ` and ${redisBudgetUs.toFixed(0)} µs in Redis on the same machine (one round trip).`);

  const report = [
    '# Benchmark report',
    '',
    `Written by \`npm run bench\` on ${new Date().toISOString().slice(0, 10)}: ${os.cpus().length} cores (${os.cpus()[0]?.model.trim()}), Node ${process.versions.node},`,
    `embedded PostgreSQL; ${USERS.toLocaleString('en')} users with ${ORDERS_PER_USER} orders each; ${REQUESTS} requests per scenario, ${CONCURRENCY} at a time,`,
    'load generated from a second process on the same machine.',
    '',
    `Seeding took ${seedSeconds.toFixed(1)} s. A warm API key check (cached verification) takes ${keyCheck.warmUs.toFixed(2)} µs;`,
    `refusing a key whose prefix does not exist takes ${keyCheck.unknownUs.toFixed(2)} µs, with no database work.`,
    budgets,
    "Every scenario request passes the per-key rate limit check (in memory; the benchmark key's budget is out of reach).",
    `The flood is a third process sending well-formed random keys (${FLOOD_RATE} requests a second, cycling through 10,000 keys, from`,
    'the same address, whose budget for requests without a valid key is set out of reach so that every one is verified and refused with 401).',
    `Measured from its process's CPU time, the service spends ${cpuPerValidUs.toFixed(0)} µs per valid \`GET /users/{user_id}\` and`,
    `${cpuPerRefusalUs.toFixed(0)} µs per refused random key (${floodRequests.toLocaleString('en')} refused during the flood runs).`,
    '',
    '| scenario | requests/s | p50 ms | p95 ms | p99 ms |',
    '|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
  process.stdout.write(`${report}\n`);
  await fs.writeFile(new URL('report.md', import.meta.url), report);
} finally {
  server?.kill('SIGTERM');
  if (server && server.exitCode === null) await new Promise((resolve) => server!.once('exit', resolve));
  await database.stop();
  await fs.rm(dataDir, { recursive: true, force: true });
}
