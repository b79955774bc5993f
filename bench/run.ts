// `npm run bench`: Portico side by side with PostGraphile 5 and 4 and a raw node-postgres baseline, on
// one throw-away embedded PostgreSQL with the same data, in interleaved rounds; then what strangers'
// random keys cost. Rewrites bench/report.md. `npm run bench -- --profile [scenario]` instead writes
// a CPU profile of Portico serving one scenario or variant (the nested query by default; `tracing`
// profiles the traced server) to bench/profile/ and prints where the time goes, by package.
//
// Sizes: BENCH_USERS (10000, with 10 orders each), BENCH_REQUESTS per run (2000), BENCH_CONCURRENCY
// (50), BENCH_ROUNDS (5); BENCH_SCENARIOS (a part of a scenario's name) and BENCH_SERVERS (a comma-separated
// list of server names) narrow a run down while working on one thing; BENCH_BASELINE (a git revision)
// sends every Portico request to a Portico built from that revision too, right before, and reports
// the working tree's ratio to it within each round (bench/baseline.ts); BENCH_SUBSCRIBE=1 subscribes
// a webhook endpoint to every event first, so that every write queues a delivery. When taskset is there, every server and PostgreSQL share core 0 and the
// load generator has core 1, so that what is measured is the servers, not the generator.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres.ts';
import { openOrm } from '../src/db/orm.ts';
import { createLogger } from '../src/log.ts';
import { MemoryCounter, type RateLimitCounter } from '../src/rate-limit/counter.ts';
import { RedisCounter } from '../src/rate-limit/redis-counter.ts';
import { generateKeySecret } from '../src/services/api-key-secrets.ts';
import { ApiKeyVerifier } from '../src/services/api-key-verifier.ts';
// The same private redis-server the tests start (a real server on a free loopback port).
import { REDIS_SERVER_PATH, startTestRedis } from '../test/support/redis.ts';
import { load, quantile, type Run } from './load.ts';
import { CAN_PIN, childrenCpuMs, cpuMs, pin, pinned, rssMb, watchRss } from './process-stats.ts';
import { summarise } from './profile-summary.ts';
import { subscribeEndpoint, webhookDelivery } from './webhooks.ts';
import { baselineLabel, inRoundOrder, keyedLabel, scenarios, type Scenario, type ServerName, type Variant } from './scenarios.ts';
import { checkOutBaseline, type Baseline } from './baseline.ts';
import { npmCi } from './npm-ci.ts';
import { imageNodeOptions, withImageNodeOptions } from './image-node-options.ts';
import { boundAddress } from '../src/net/bound-address.ts';
import { newId } from '../src/db/ids.ts';
import { CursorCodec } from '../src/pagination/cursor.ts';
import { shaped } from '../src/guards.ts';

const USERS = Number(process.env.BENCH_USERS ?? 10_000);
const ORDERS_PER_USER = 10;
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const BASELINE = process.env.BENCH_BASELINE;
const SUBSCRIBE = process.env.BENCH_SUBSCRIBE === '1';
/** Every server gets a pool of this many connections. */
const POOL = 10;
const SERVER_CORE = 0;
const LOAD_CORE = 1;
const BENCH_DIR = path.dirname(new URL(import.meta.url).pathname);
const ROOT = path.dirname(BENCH_DIR);

const { values: flags } = parseArgs({ options: { profile: { type: 'boolean', default: false } }, allowPositionals: true });
const profileOnly = process.argv.slice(2).find((arg) => !arg.startsWith('--'));

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = boundAddress(server);
      server.close(() => resolve(port));
    });
  });
}

/** The reference servers keep their own dependencies (PostGraphile 4 needs graphql 15): installed here on first use. */
function installReference(folder: string): void {
  const cwd = path.join(BENCH_DIR, 'references', folder);
  if (existsSync(path.join(cwd, 'node_modules'))) return;
  npmCi(cwd, `the ${folder} reference (bench only)`);
}

interface Server {
  name: ServerName;
  url: string;
  child: ChildProcess;
}

/** Starts a server pinned to the servers' core; resolves once it prints "listening" or answers /ready. */
async function startServer(name: ServerName, command: string[], env: NodeJS.ProcessEnv, cwd = ROOT): Promise<Server> {
  const port = await freePort();
  const portico = name.startsWith('Portico');
  const [file, args] = pinned(SERVER_CORE, process.execPath, [...command, ...(portico ? [] : [String(port), String(POOL)])]);
  const own = portico ? withImageNodeOptions(env, cwd) : env;
  const child = spawn(file, args, { cwd, env: { ...own, PORT: String(port), HOST: '127.0.0.1' }, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`${name} exited with ${code}`))));
  const listening = new Promise<void>((resolve) => child.stdout.on('data', (chunk: Buffer) => chunk.includes('listening') && resolve()));
  // Portico logs nothing at the benchmark's log level; it says it is ready on /ready.
  const ready = async () => {
    for (;;) {
      if (
        await fetch(`${url}/ready`).then(
          (r) => r.ok,
          () => false,
        )
      )
        return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  await Promise.race([portico ? ready() : listening, exited]);
  return { name, url, child };
}

async function stopServer(server: Server | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (!server || server.child.exitCode !== null) return;
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill(signal);
  await exited;
}

function issueKey(env: NodeJS.ProcessEnv): string {
  const result = spawnSync(
    process.execPath,
    ['src/cli/keys.ts', 'create', '--name', 'Benchmark', '--scopes', 'admin', '--rate-limit', '1000000000', '--json'],
    { cwd: ROOT, env, encoding: 'utf8' },
  );
  if (result.status !== 0) throw new Error(`creating the benchmark key failed: ${result.stderr}`);
  const created = shaped(JSON.parse(result.stdout), { secret: 'string' });
  if (created) return created.secret;
  throw new Error(`the benchmark key's creation printed no secret: ${result.stdout}`);
}

/** SQL statements PostgreSQL has run in the benchmark database (pg_stat_statements). */
async function statementCount(admin: pg.Client): Promise<number> {
  const { rows } = await admin.query<{ calls: string }>(
    'select coalesce(sum(calls), 0) as calls from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())',
  );
  return Number(rows[0]!.calls);
}

interface Measurement {
  run: Run;
  cpuMsPerRequest: number;
  /** PostgreSQL's backends' CPU per request (with several servers idle, nearly all of it this one's). */
  databaseCpuMsPerRequest: number;
  peakRssMb: number;
  statementsPerRequest: number;
}

/**
 * Requests a server answers, unmeasured, right before each measured run. A server that sat idle while
 * the others ran serves its next requests slower (two identical Portico servers, one of them idle for
 * longer between its runs, measured 9–16% apart without this), and in a round the servers sit idle
 * for different lengths: the traced Portico, with two scenarios, for the longest.
 */
const WARM_UP = 300;

async function measure(admin: pg.Client, server: Server, variant: Variant, requests = REQUESTS): Promise<Measurement> {
  await load(server.url, CONCURRENCY, WARM_UP, variant.request);
  const pid = server.child.pid!;
  const cpuBefore = cpuMs(pid);
  const databaseBefore = childrenCpuMs(database.pid);
  const statementsBefore = await statementCount(admin);
  const rss = watchRss(pid);
  const run = await load(server.url, CONCURRENCY, requests, variant.request);
  const peakRssMb = rss.stop();
  // The count itself is one statement.
  const statements = (await statementCount(admin)) - statementsBefore - 1;
  return {
    run,
    cpuMsPerRequest: (cpuMs(pid) - cpuBefore) / requests,
    databaseCpuMsPerRequest: (childrenCpuMs(database.pid) - databaseBefore) / requests,
    peakRssMb,
    statementsPerRequest: statements / requests,
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const perSecond = (run: Run) => run.requests / run.seconds;

/** Requests per second of one observability peer over another's, in each round. */
interface PeerRatios {
  /** The traced Portico over its untraced twin. */
  traced: number[];
  /** The twin over the first Portico. */
  twin: number[];
  /** The twin (metrics counted) over the Portico that serves no metrics. */
  metered: number[];
}

const roundsOf = (ratios: number[]) => `median of the rounds; ${ratios.map((r) => r.toFixed(2)).join(', ')}`;

/** What tracing and metrics cost in a scenario: the observability peers against each other, placed alike in every round. */
function observabilityLines(ratios: PeerRatios | undefined): string[] {
  if (!ratios) return [];
  const lines: string[] = [];
  if (ratios.metered.length > 0) {
    lines.push(
      `Metrics: the twin, counted in the metrics as every Portico here is, served ${median(ratios.metered).toFixed(2)}× the requests per second ` +
        `of a Portico that serves no metrics and so counts nothing (${roundsOf(ratios.metered)}).`,
      '',
    );
  }
  if (ratios.traced.length === 0) return lines;
  const traced =
    `Tracing at 10%: the traced Portico served ${median(ratios.traced).toFixed(2)}× the requests per second of its untraced twin ` +
    `(${roundsOf(ratios.traced)}).`;
  // A narrowed run (BENCH_SERVERS) may leave the first Portico out.
  const twin =
    ratios.twin.length === 0
      ? ''
      : ` The twin served ${median(ratios.twin).toFixed(2)}× Portico's: ` +
        'both wait between their runs while the other servers run, which the first Portico, busy in every scenario, does less.';
  return [...lines, traced + twin, ''];
}

/** What an Idempotency-Key costs a write, per server that sends one: its keyed write against its plain one, in each round. */
function keyedLines(ratios: Map<ServerName, number[]> | undefined): string[] {
  const portico = ratios?.get('Portico');
  if (!portico) return [];
  const raw = ratios?.get('raw pg');
  return [
    `Idempotency keys: Portico's keyed write served ${median(portico).toFixed(2)}× the requests per second of its write without a key (${roundsOf(portico)})` +
      (raw
        ? `; raw pg, sending the statements a keyed write needs (BEGIN, the claim and the insert in one message, the record and COMMIT in a second), ${median(raw).toFixed(2)}× of its own (${roundsOf(raw)}).`
        : '.'),
    '',
  ];
}

/** The working tree against the baseline, per Portico variant of a scenario. */
function baselineLines(scenario: Scenario, ratios: Map<Variant, number[]>, against: Baseline | undefined): string[] {
  const lines = scenario.variants.flatMap((variant) => {
    const rounds = ratios.get(variant);
    if (!rounds || !against) return [];
    return [`- ${variant.label}: ${median(rounds).toFixed(2)}× (${rounds.map((r) => r.toFixed(2)).join(', ')})`];
  });
  if (lines.length === 0 || !against) return [];
  return [
    `Against the baseline \`${against.revision}\` (${against.commit}), requests per second within each round (median, then each round):`,
    '',
    ...lines,
    '',
  ];
}

function reportRow(variant: Variant, runs: Measurement[], ratios: Partial<Record<ServerName, number[]>>): string {
  const latencies = runs.flatMap((m) => m.run.latencies);
  const rate = runs.reduce((sum, m) => sum + m.run.requests, 0) / runs.reduce((sum, m) => sum + m.run.seconds, 0);
  const ratio = (server: ServerName) => (ratios[server]?.length ? `${median(ratios[server]).toFixed(2)}×` : '');
  return [
    variant.label,
    Math.round(rate),
    quantile(latencies, 0.5).toFixed(1),
    quantile(latencies, 0.99).toFixed(1),
    median(runs.map((m) => m.cpuMsPerRequest)).toFixed(2),
    median(runs.map((m) => m.databaseCpuMsPerRequest)).toFixed(2),
    Math.round(Math.max(...runs.map((m) => m.peakRssMb))),
    median(runs.map((m) => m.statementsPerRequest)).toFixed(1),
    ratio('PostGraphile 5'),
    ratio('PostGraphile 4'),
    ratio('raw pg'),
  ]
    .join(' | ')
    .replace(/^/, '| ')
    .replace(/$/, ' |');
}

/** Mean cost of verifying an API key that is already in the verifier's cache, and of refusing an unknown one. */
async function keyChecks(databaseUrl: string, pepper: string, apiKey: string): Promise<{ warmUs: number; unknownUs: number }> {
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

/**
 * Microseconds to mint one cursor of a page by creation time, and to check one (the goal: at most 2 µs
 * per edge): the median of 7 batches, so that a collection of this process's own heap (large by now,
 * with every run's latencies) or a stall of the host in one batch does not stand for the cost.
 */
function cursorCosts(): { mintUs: number; checkUs: number } {
  const codec = new CursorCodec(randomBytes(32).toString('base64url'));
  const ids = Array.from({ length: 1000 }, () => newId('user'));
  const mint = (i: number) => codec.encode('users/created', [1_700_000_000_000 + i, ids[i % ids.length]!]);
  const cursors = ids.map((_, i) => mint(i));
  const perBatch = 40_000;
  // As in a request, each cursor is garbage at once; kept ones would be copied by every collection.
  let length = 0;
  const microsPerCall = (call: (i: number) => number) => {
    const batches: number[] = [];
    for (let batch = 0; batch < 7; batch++) {
      const started = performance.now();
      for (let i = 0; i < perBatch; i++) length += call(i);
      batches.push(((performance.now() - started) * 1000) / perBatch);
    }
    return batches.sort((a, b) => a - b)[3]!;
  };
  const mintUs = microsPerCall((i) => mint(i).length);
  const checkUs = microsPerCall((i) => codec.decode('users/created', cursors[i % cursors.length]!, 'after').length);
  if (length === 0) throw new Error('no cursors were made');
  return { mintUs, checkUs };
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
/** Rounds of the flood comparison: runs with and without the flood alternate, so that both meet the same machine. */
const FLOOD_ROUNDS = 4;

/** Starts the flood in a process of its own, once it sends; `stop` ends it and says how many were sent and refused. */
async function startKeyFlood(url: string): Promise<{ stop(): Promise<{ sent: number; refused: number }> }> {
  const [file, args] = pinned(LOAD_CORE, process.execPath, [path.join(BENCH_DIR, 'key-flood.ts'), url, String(FLOOD_RATE)]);
  const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'inherit'] });
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
      const counts = shaped(JSON.parse(out.slice('sending\n'.length)), { sent: 'number', refused: 'number' });
      if (counts) return { sent: counts.sent, refused: counts.refused };
      throw new Error(`the flood ended without its counts: ${out}`);
    },
  };
}

/** How long the flood runs alone, to weigh what a refusal costs. */
const FLOOD_ALONE_MS = 3_000;

/**
 * The service's CPU per refused key, measured with the flood alone: beside valid reads, its share is
 * smaller than their run-to-run variation, and a difference of the two said nothing.
 */
async function refusalCost(portico: Server): Promise<{ cpuUs: number; refused: number }> {
  const pid = portico.child.pid!;
  const before = cpuMs(pid);
  const flood = await startKeyFlood(portico.url);
  await new Promise((resolve) => setTimeout(resolve, FLOOD_ALONE_MS));
  const { sent, refused } = await flood.stop();
  if (refused !== sent) throw new Error(`the flood was not refused: ${refused} of ${sent}`);
  return { cpuUs: ((cpuMs(pid) - before) * 1000) / refused, refused };
}

/** What strangers trying random keys cost the service: the key checks alone, then a flood against valid reads. */
async function strangers(
  admin: pg.Client,
  portico: Server,
  read: Variant,
  databaseUrl: string,
  pepper: string,
  apiKey: string,
): Promise<string[]> {
  const keyCheck = await keyChecks(databaseUrl, pepper, apiKey);
  const quiet: Measurement[] = [];
  const flooded: Measurement[] = [];
  let floodRequests = 0;
  for (let round = 0; round < FLOOD_ROUNDS; round++) {
    quiet.push(await measure(admin, portico, read));
    const flood = await startKeyFlood(portico.url);
    flooded.push(await measure(admin, portico, read));
    const { sent, refused } = await flood.stop();
    if (refused !== sent) throw new Error(`the flood was not refused: ${refused} of ${sent}`);
    floodRequests += sent;
  }
  const rate = (runs: Measurement[]) => runs.reduce((s, m) => s + m.run.requests, 0) / runs.reduce((s, m) => s + m.run.seconds, 0);
  const floodRow = (label: string, runs: Measurement[]) => {
    const latencies = runs.flatMap((m) => m.run.latencies);
    return `| ${label} | ${Math.round(rate(runs))} | ${quantile(latencies, 0.5).toFixed(1)} | ${quantile(latencies, 0.99).toFixed(1)} |`;
  };
  const alone = await refusalCost(portico);
  return [
    '## Strangers',
    '',
    `A warm API key check (cached verification) takes ${keyCheck.warmUs.toFixed(2)} µs; refusing a key whose prefix does not exist takes`,
    `${keyCheck.unknownUs.toFixed(2)} µs, with no database work. A third process then sends well-formed random keys (${FLOOD_RATE} requests a second,`,
    'cycling through 10,000 keys, from the same address, whose budget for requests without a valid key is set out of reach so that every one',
    `is verified and refused with 401), in ${FLOOD_ROUNDS} runs alternating with runs without it:`,
    '',
    '| `GET /users/{user_id}` with a valid key | requests/s | p50 ms | p99 ms |',
    '|---|---|---|---|',
    floodRow('without the flood', quiet),
    floodRow('during the flood', flooded),
    '',
    `Valid-key throughput during the flood: ${((rate(flooded) / rate(quiet)) * 100).toFixed(0)}% of without (${floodRequests.toLocaleString('en')} refused).`,
    `Sent alone for ${FLOOD_ALONE_MS / 1000} s, the flood cost the service ${alone.cpuUs.toFixed(0)} µs of CPU per refused key (${alone.refused.toLocaleString('en')} refused),`,
    `against ${(median(quiet.map((m) => m.cpuMsPerRequest)) * 1000).toFixed(0)} µs per valid read.`,
    '',
  ];
}

/** Waits for a file the profiled server writes, for at most `ms`. */
async function fileAppears(file: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`${file} did not appear within ${ms / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Profiles the measured load alone (bench/profile-window.ts): after the warm-up, the server starts
 * profiling on a signal, and writes the profile on the next.
 */
async function profile(server: Server, variant: Variant, directory: string): Promise<string> {
  const pid = server.child.pid!;
  await load(server.url, CONCURRENCY, WARM_UP, variant.request);
  server.child.kill('SIGUSR2');
  await fileAppears(path.join(directory, `window-${pid}.started`));
  await load(server.url, CONCURRENCY, REQUESTS * 3, variant.request);
  server.child.kill('SIGUSR2');
  const file = path.join(directory, `window-${pid}.cpuprofile`);
  await fileAppears(file);
  return file;
}

/**
 * An OpenTelemetry collector that takes every export and keeps nothing: what tracing costs the
 * service is measured, not what a collector does with the spans. It runs on the load generator's core.
 */
async function startDiscardingCollector(): Promise<{ url: string; close(): void }> {
  const collector = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${boundAddress(collector).port}`, close: () => collector.close() };
}

/** The environment of the Portico server `name`, the same whether it is measured or profiled. */
function porticoEnv(name: ServerName, env: NodeJS.ProcessEnv, collectorUrl?: string): NodeJS.ProcessEnv {
  if (name === 'Portico traced') {
    if (collectorUrl === undefined) throw new Error('the traced Portico needs a collector');
    return tracedEnv(env, collectorUrl);
  }
  if (name === 'Portico unmetered') {
    const { METRICS_PORT: _served, ...unmetered } = env;
    return unmetered;
  }
  return env;
}

/** Portico's environment with tracing on: one request in ten sampled, exported to `collectorUrl`. */
function tracedEnv(env: NodeJS.ProcessEnv, collectorUrl: string): NodeJS.ProcessEnv {
  return {
    ...env,
    OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl,
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.1',
  };
}

// ——— the run ———

if (CAN_PIN) pin(process.pid, LOAD_CORE);
const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'portico-bench-'));
await fs.chmod(dataDir, 0o755);
const database = await startEmbeddedPostgres(dataDir, createLogger('warn'), { shared_preload_libraries: 'pg_stat_statements' });
// Backends are forked by the postmaster, so they inherit its core.
pin(database.pid, SERVER_CORE);
const servers: Server[] = [];
let baseline: Baseline | undefined;
let collector: { url: string; close(): void } | undefined;
const admin = new pg.Client({ connectionString: database.url() });
try {
  if (!flags.profile) for (const folder of ['postgraphile5', 'postgraphile4']) installReference(folder);
  const pepper = randomBytes(32).toString('hex');
  const env = {
    ...process.env,
    DATABASE_URL: database.url(),
    DATA_DIR: dataDir,
    API_KEY_PEPPER: pepper,
    DATABASE_POOL_MAX: String(POOL),
    // Every server runs as in production (graphql-js, among others, checks less in that mode).
    NODE_ENV: 'production',
    CURSOR_SECRET: randomBytes(32).toString('hex'),
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'),
    JWT_SECRET: randomBytes(32).toString('hex'),
    JWT_ISSUER: 'portico-bench',
    JWT_AUDIENCE: 'portico',
    // Request logging is off, as PostGraphile's query log is.
    LOG_LEVEL: 'warn',
    // Metrics on, as where Prometheus scrapes them (on a port of their own, which nothing scrapes here):
    // every request pays for its counts, latencies and GraphQL phases.
    METRICS_PORT: '0',
    // The flood must reach key verification, not stop at the per-address limit.
    RATE_LIMIT_UNIDENTIFIED: '1000000000',
  };
  const migrated = spawnSync(process.execPath, ['src/cli/db.ts', 'migrate'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
  if (migrated.status !== 0) throw new Error('migrating the benchmark database failed');
  const apiKey = issueKey(env);
  const seedStarted = performance.now();
  const seeded = spawnSync(process.execPath, ['src/cli/seed.ts', '--users', String(USERS), '--orders-per-user', String(ORDERS_PER_USER)], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (seeded.status !== 0) throw new Error('seeding failed');
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  await admin.connect();
  await admin.query('create extension if not exists pg_stat_statements');
  await admin.query('vacuum analyze');
  // Every write then queues a delivery too, as where webhooks are in use; no worker delivers them.
  if (SUBSCRIBE) await subscribeEndpoint(admin, env, 'http://127.0.0.1:9/not-delivered');
  const userIds = (await admin.query<{ id: string }>('select id from users order by random() limit 2000')).rows.map((row) => row.id);

  const profileDir = path.join(BENCH_DIR, 'profile');
  const wantedServers = process.env.BENCH_SERVERS?.split(',').map((name) => name.trim());
  const all = scenarios({ apiKey, userIds, baseline: BASELINE !== undefined && !flags.profile })
    .filter((scenario) => !process.env.BENCH_SCENARIOS || scenario.name.includes(process.env.BENCH_SCENARIOS))
    .map((scenario) => ({ ...scenario, variants: scenario.variants.filter((v) => !wantedServers || wantedServers.includes(v.server)) }));

  if (flags.profile) {
    // The scenario or Portico variant whose name holds the text; the nested query by default.
    const wanted = profileOnly ?? 'orders(limit: 5)';
    const porticos = all.flatMap((s) =>
      s.variants.filter((v) => v.server.startsWith('Portico')).map((variant) => ({ scenario: s, variant })),
    );
    const chosen =
      porticos.find(({ variant }) => variant.label.includes(wanted) && variant.label !== 'Portico') ??
      porticos.find(({ scenario }) => scenario.name.includes(wanted)) ??
      porticos[0]!;
    await fs.rm(profileDir, { recursive: true, force: true });
    await fs.mkdir(profileDir, { recursive: true });
    const profiled = ['--import', path.join(BENCH_DIR, 'profile-window.ts'), 'src/main.ts', 'api'];
    if (chosen.variant.server === 'Portico traced') collector = await startDiscardingCollector();
    const profiledEnv = { ...porticoEnv(chosen.variant.server, env, collector?.url), BENCH_PROFILE_DIR: profileDir };
    servers.push(await startServer(chosen.variant.server, profiled, profiledEnv));
    process.stderr.write(`profiling ${chosen.variant.label} serving ${chosen.scenario.name} …\n`);
    const file = await profile(servers[0]!, chosen.variant, profileDir);
    await stopServer(servers[0], 'SIGINT');
    const summary = summarise(file);
    process.stdout.write(
      [
        `CPU profile of ${chosen.variant.label} serving ${chosen.scenario.name} (the measured requests alone, not start-up or warm-up): ${path.relative(ROOT, file)} (open it in Chrome DevTools or speedscope).`,
        'Where the busy time goes:',
        '',
        ...summary.filter((row) => row.percent >= 0.5).map((row) => `${row.percent.toFixed(1).padStart(5)} %  ${row.place}`),
        '',
      ].join('\n'),
    );
  } else {
    servers.push(await startServer('Portico', ['src/main.ts', 'api'], env));
    const wanted = (name: ServerName) => all.some((scenario) => scenario.variants.some((v) => v.server === name));
    const references = path.join(BENCH_DIR, 'references');
    if (wanted('PostGraphile 5'))
      servers.push(await startServer('PostGraphile 5', ['server.js', database.url()], env, path.join(references, 'postgraphile5')));
    if (wanted('PostGraphile 4'))
      servers.push(await startServer('PostGraphile 4', ['server.js', database.url()], env, path.join(references, 'postgraphile4')));
    if (wanted('raw pg')) servers.push(await startServer('raw pg', [path.join(BENCH_DIR, 'raw-pg-server.ts'), database.url()], env));
    const floor = [path.join(BENCH_DIR, 'stack-floor-server.ts'), database.url()];
    if (wanted('Stack floor')) servers.push(await startServer('Stack floor', floor, env));
    if (wanted('yoga + jit')) servers.push(await startServer('yoga + jit', floor, { ...env, FLOOR_PLUGINS: 'jit' }));
    if (wanted('Portico traced')) {
      collector = await startDiscardingCollector();
      servers.push(await startServer('Portico traced', ['src/main.ts', 'api'], porticoEnv('Portico traced', env, collector.url)));
    }
    for (const peer of ['Portico twin', 'Portico unmetered'] as const) {
      if (wanted(peer)) servers.push(await startServer(peer, ['src/main.ts', 'api'], porticoEnv(peer, env)));
    }
    if (wanted('Portico baseline')) {
      baseline = await checkOutBaseline(BASELINE!, ROOT);
      servers.push(await startServer('Portico baseline', ['src/main.ts', 'api'], env, baseline.root));
    }
    const serverOf = (name: ServerName) => servers.find((s) => s.name === name)!;
    const idleRss = Object.fromEntries(servers.map((s) => [s.name, rssMb(s.child.pid!)]));

    const results = new Map<Variant, Measurement[]>();
    const ratios = new Map<Variant, Partial<Record<ServerName, number[]>>>();
    /** Per scenario with a traced Portico: the traced one against its twin, and the twin against Portico, in each round. */
    const peerRatios = new Map<Scenario, PeerRatios>();
    /** Per scenario with keyed writes: each server's keyed write over its plain one, in each round. */
    const keyedRatios = new Map<Scenario, Map<ServerName, number[]>>();
    /** Per Portico variant: its requests per second over the baseline's, in each round. */
    const baselineRatios = new Map<Variant, number[]>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const scenario of all) {
        const inRound = new Map<Variant, Measurement>();
        for (const variant of inRoundOrder(scenario.variants, round)) {
          const measured = await measure(admin, serverOf(variant.server), variant);
          inRound.set(variant, measured);
          results.set(variant, [...(results.get(variant) ?? []), measured]);
        }
        // Ratios are taken within the round, so that both sides met the same machine.
        for (const variant of scenario.variants) {
          const own = ratios.get(variant) ?? {};
          for (const reference of scenario.variants.filter((v) => v.label === v.server && v.server !== 'Portico')) {
            (own[reference.server] ??= []).push(perSecond(inRound.get(variant)!.run) / perSecond(inRound.get(reference)!.run));
          }
          ratios.set(variant, own);
        }
        for (const variant of scenario.variants) {
          const before = scenario.variants.find((v) => v.server === 'Portico baseline' && v.label === baselineLabel(variant.label));
          if (variant.server !== 'Portico' || !before) continue;
          baselineRatios.set(variant, [
            ...(baselineRatios.get(variant) ?? []),
            perSecond(inRound.get(variant)!.run) / perSecond(inRound.get(before)!.run),
          ]);
        }
        for (const variant of scenario.variants) {
          const keyed = scenario.variants.find((v) => v.label === keyedLabel(variant.label));
          if (!keyed) continue;
          const own = keyedRatios.get(scenario) ?? new Map<ServerName, number[]>();
          own.set(variant.server, [
            ...(own.get(variant.server) ?? []),
            perSecond(inRound.get(keyed)!.run) / perSecond(inRound.get(variant)!.run),
          ]);
          keyedRatios.set(scenario, own);
        }
        const rateOf = (server: ServerName) => {
          const variant = scenario.variants.find((v) => v.server === server);
          return variant && perSecond(inRound.get(variant)!.run);
        };
        const peers: ServerName[] = ['Portico', 'Portico twin', 'Portico traced', 'Portico unmetered'];
        const [plain, twin, traced, unmetered] = peers.map(rateOf);
        if (twin) {
          const own = peerRatios.get(scenario) ?? { traced: [], twin: [], metered: [] };
          if (traced) own.traced.push(traced / twin);
          if (traced && plain) own.twin.push(twin / plain);
          if (unmetered) own.metered.push(twin / unmetered);
          peerRatios.set(scenario, own);
        }
      }
    }

    const porticoRead = scenarios({ apiKey, userIds })
      .find((s) => s.name === '`user(id)`')!
      .variants.find((v) => v.label.startsWith('Portico REST'))!;
    const narrowed = process.env.BENCH_SCENARIOS !== undefined || wantedServers !== undefined || baseline !== undefined || SUBSCRIBE;
    const strangerLines = narrowed ? [] : await strangers(admin, serverOf('Portico'), porticoRead, database.url(), pepper, apiKey);
    const webhookLines =
      narrowed && !process.env.BENCH_SCENARIOS?.includes('webhook')
        ? []
        : await webhookDelivery(database.url(), database.pid, env, ROOT, SERVER_CORE);
    const memoryBudgetUs = await budgetCheck(new MemoryCounter(60_000));
    const redisBudgetUs = await redisBudgetCheck();
    const cursorUs = cursorCosts();

    const report = [
      '# Benchmark report',
      '',
      `Written by \`npm run bench\` on ${new Date().toISOString().slice(0, 10)}: ${os.cpus().length} cores (${os.cpus()[0]?.model.trim()}), Node ${process.versions.node},`,
      `embedded PostgreSQL; ${USERS.toLocaleString('en')} users with ${ORDERS_PER_USER} orders each (seeded in ${seedSeconds.toFixed(1)} s). Every server has a pool of ${POOL}`,
      `connections; each run sends ${REQUESTS} requests, ${CONCURRENCY} at a time, over keep-alive connections; ${ROUNDS} rounds, each running every`,
      `scenario on every server in turn, each run after ${WARM_UP} unmeasured requests to the same server. Every server runs with \`NODE_ENV=production\`. ` +
        (CAN_PIN
          ? 'The servers and PostgreSQL share core 0; the load generator has core 1 (taskset).'
          : 'taskset is not available here, so servers, PostgreSQL and the load generator share every core.'),
      '',
      'Every Portico request passes its API key check, the per-key rate limit (in memory), usage counting and the document limits,',
      'and is counted in the metrics (`METRICS_PORT` set, as where Prometheus scrapes);',
      `Portico runs with the V8 settings its image ships (the Dockerfile's \`NODE_OPTIONS="${imageNodeOptions(ROOT)}"\`), the others with V8's defaults;`,
      "request logging is off (`LOG_LEVEL=warn`), as PostGraphile's query log is. PostGraphile 5 and 4 run with their default presets",
      '(amber for 5) over the same tables; `raw pg` is node-postgres sending the SQL each scenario needs from a bare HTTP server.',
      "On `user(id)`, two servers built from the stack Portico is built on, without Portico's own code, answer with the SQL raw pg sends",
      '(bench/stack-floor-server.ts): `Stack floor`, graphql-yoga and Pothos with the plugins the stack prescribes as they come (graphql-armor,',
      "@envelop/rate-limiter with a store that decides nothing) and yoga's Prometheus phase timing; `yoga + jit`, yoga and Pothos with",
      'graphql-jit and nothing else, the fastest its GraphQL layer gets. Neither checks a key or counts usage.',
      "Server CPU is the server process alone; PostgreSQL CPU is its backends'; memory is the server's resident set; statements are those PostgreSQL ran",
      '(pg_stat_statements) per request. Ratios compare requests per second within each round (median of the rounds).',
      '',
      `Resident memory when idle: ${servers.map((s) => `${s.name} ${Math.round(idleRss[s.name]!)} MB`).join(', ')}.`,
      '',
      ...all.flatMap((scenario) => [
        `### ${scenario.name}`,
        '',
        '| server | requests/s | p50 ms | p99 ms | server CPU ms/request | PostgreSQL CPU ms/request | peak RSS MB | statements/request | × PostGraphile 5 | × PostGraphile 4 | × raw pg |',
        '|---|---|---|---|---|---|---|---|---|---|---|',
        ...scenario.variants.map((variant) => reportRow(variant, results.get(variant)!, ratios.get(variant)!)),
        '',
        ...observabilityLines(peerRatios.get(scenario)),
        ...keyedLines(keyedRatios.get(scenario)),
        ...baselineLines(scenario, baselineRatios, baseline),
      ]),
      ...strangerLines,
      ...webhookLines,
      '## Rate limit budget checks',
      '',
      `One budget check takes ${memoryBudgetUs.toFixed(2)} µs in memory` +
        (redisBudgetUs === undefined
          ? ' (no redis-server to measure the Redis one).'
          : ` and ${redisBudgetUs.toFixed(0)} µs in Redis on the same machine (one round trip).`),
      '',
      '## Cursors',
      '',
      `Minting the cursor of one edge (a page by creation time: its time and id, signed) takes ${cursorUs.mintUs.toFixed(2)} µs (median of 7 batches); ` +
        `checking and reading one that comes back takes ${cursorUs.checkUs.toFixed(2)} µs.`,
      '',
    ].join('\n');
    process.stdout.write(`${report}\n`);
    // A narrowed run is for the one working on something, not the report.
    if (!narrowed) await fs.writeFile(path.join(BENCH_DIR, 'report.md'), report);
  }
} finally {
  await admin.end().catch(() => undefined);
  for (const server of servers) await stopServer(server);
  collector?.close();
  await baseline?.remove();
  await database.stop();
  await fs.rm(dataDir, { recursive: true, force: true });
}
