// The real entry point (`node src/main.ts`) as a child process: first start on an empty data folder,
// restart on the same data, recovery after a crash, and start failures reported as one line on stderr.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createEmptyDatabase } from '../support/database.ts';
import { match } from '../support/match.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

interface Run {
  child: ChildProcess;
  /** Complete stdout lines so far (JSON log lines). */
  stdout: string[];
  stderr: string;
  /** Settles once the process has exited and its output is fully read. */
  exited: Promise<Exit>;
}

const runs: Run[] = [];
const tempDirs: string[] = [];

function startProcess(env: Record<string, string>): Run {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info', ...env };
  if (!('DATABASE_URL' in env)) delete childEnv.DATABASE_URL;
  const child = spawn(process.execPath, ['src/main.ts'], { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let partial = '';
  const run: Run = {
    child,
    stdout: [],
    stderr: '',
    exited: new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (code, signal) => resolve({ code, signal }));
    }),
  };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    run.stdout.push(...lines);
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    run.stderr += chunk;
  });
  runs.push(run);
  return run;
}

function logs(run: Run): LogLine[] {
  return run.stdout.filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as LogLine);
}

function isRunning(run: Run): boolean {
  return run.child.exitCode === null && run.child.signalCode === null;
}

async function waitFor<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError = '';
  for (;;) {
    try {
      const result = await check();
      if (result !== undefined && result !== false) return result;
    } catch (error) {
      lastError = String(error);
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (last error: ${lastError})` : ''}`);
    }
    await delay(50);
  }
}

/**
 * The port the service listens on, once it says so. Services here listen on a port the system
 * chooses (PORT=0): one picked free beforehand could be taken by another test before the service binds it.
 */
async function waitUntilListening(run: Run): Promise<number> {
  return await waitFor(
    () => {
      if (!isRunning(run)) throw new Error(`the process exited early; stderr: ${run.stderr}`);
      const port = logs(run).find((line) => line.msg.startsWith('listening on http://'))?.port;
      return typeof port === 'number' ? port : undefined;
    },
    45_000,
    'the "listening on" log line',
  );
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function makeTempDir(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'portico-startup-'));
  // As root the embedded PostgreSQL runs as user "postgres", who must be able to traverse this folder.
  await fs.chmod(dir, 0o755);
  tempDirs.push(dir);
  return dir;
}

async function httpJson(url: string, init?: RequestInit): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, init);
  return { status: response.status, body: await response.json() };
}

/** `keys list --json`, a command, on the embedded PostgreSQL of `dataDir`. */
async function listKeys(dataDir: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const command = spawn(process.execPath, ['src/cli/keys.ts', 'list', '--json'], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  command.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  command.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => command.once('close', resolve));
  return { code, stdout, stderr };
}

/** The key the first development start created and printed; later starts reuse it. */
let apiKey = '';

async function gql<T>(port: number, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const { status, body } = await httpJson(`http://127.0.0.1:${port}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', 'x-api-key': apiKey },
    body: JSON.stringify({ query, variables }),
  });
  expect(status).toBe(200);
  expect(body).not.toHaveProperty('errors');
  return (body as { data: T }).data;
}

function pidGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

async function postgresPid(dataDir: string): Promise<number> {
  const pid = Number((await fs.readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0]);
  expect(Number.isInteger(pid) && pid > 0).toBe(true);
  return pid;
}

async function stopRun(run: Run): Promise<void> {
  if (!isRunning(run)) return;
  // SIGTERM rather than SIGKILL, so that the run also stops the PostgreSQL it owns.
  run.child.kill('SIGTERM');
  const exited = await Promise.race([run.exited.then(() => true), delay(40_000, false)]);
  if (!exited) run.child.kill('SIGKILL');
}

/** A PostgreSQL orphaned by a failed test (e.g. its node process was SIGKILLed) is stopped here by its pid. */
async function stopLeftoverPostgres(dataDir: string): Promise<void> {
  const pid = await postgresPid(dataDir).catch(() => undefined);
  if (pid === undefined || pidGone(pid)) return;
  const cmdline = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  if (!cmdline.includes('postgres')) return;
  process.kill(pid, 'SIGINT');
  await waitFor(() => pidGone(pid), 30_000, `PostgreSQL ${pid} to stop`).catch(() => process.kill(pid, 'SIGKILL'));
}

afterEach(async () => {
  await Promise.all(runs.splice(0).map(stopRun));
});

afterAll(async () => {
  for (const dir of tempDirs.splice(0)) {
    await stopLeftoverPostgres(dir);
    await fs.rm(dir, { recursive: true, force: true });
  }
});

const CREATE_USER = 'mutation ($input: CreateUserInput!) { createUser(input: $input) { id } }';
const READ_USER = 'query ($id: ID!) { user(id: $id) { id email } }';

// The cases share one data folder and build on each other, so they run in order.
describe('embedded PostgreSQL lifecycle', { timeout: 60_000 }, () => {
  let dataDir: string;
  let user: { id: string; email: string };

  it('initialises and starts PostgreSQL on an empty data folder, serves, and stops both on SIGINT', async () => {
    dataDir = await makeTempDir();
    const run = startProcess({ DATA_DIR: dataDir, PORT: '0' });
    const port = await waitUntilListening(run);

    const messages = logs(run).map((line) => line.msg);
    expect(messages).toContain('initialising the embedded PostgreSQL data folder (first run)');
    expect(messages).toContain('embedded PostgreSQL started');
    expect(await httpJson(`http://127.0.0.1:${port}/health`)).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await httpJson(`http://127.0.0.1:${port}/ready`)).toEqual({
      status: 200,
      body: { status: 'ready', database: { available: true, outages: 0 }, rateLimits: { degraded: false, unmeteredRequests: 0 } },
    });

    // A fresh development install creates a key with every scope and shows it once, on the terminal.
    apiKey = await waitFor(() => /pk_test_[0-9A-Za-z]{33}/.exec(run.stderr)?.[0], 10_000, 'the first key on stderr');
    expect(run.stderr).toContain(`curl -s http://localhost:${port}/users -H 'x-api-key: ${apiKey}'`);
    expect(run.stdout.join('\n')).not.toContain(apiKey);
    expect((await httpJson(`http://127.0.0.1:${port}/users`)).status).toBe(401);
    const email = 'startup-first@example.com';
    const created = await gql<{ createUser: { id: string } }>(port, CREATE_USER, { input: { name: 'First Start', email } });
    user = { id: created.createUser.id, email };

    const pgPid = await postgresPid(dataDir);
    expect(pidGone(pgPid)).toBe(false);
    expect(await fs.readFile(path.join(dataDir, 'postgres.owner'), 'utf8')).toBe(`${run.child.pid}\nservice\n`);

    run.child.kill('SIGINT');
    expect(await run.exited).toEqual({ code: 0, signal: null });
    await waitFor(() => pidGone(pgPid), 10_000, `PostgreSQL ${pgPid} to be gone`);
    // In any order: pino writes asynchronously and flushes what is pending synchronously at exit, so the last lines may swap.
    expect(logs(run).map((line) => line.msg)).toEqual(match.arrayContaining(['embedded PostgreSQL stopped', 'stopped']));
    expect(run.stderr.trim().startsWith('No API keys existed')).toBe(true);
  });

  it('stops cleanly when interrupted in the middle of its first start, and the next start serves on that folder', async () => {
    const folder = await makeTempDir();
    const first = startProcess({ DATA_DIR: folder, PORT: '0' });
    await waitFor(
      () => logs(first).some((line) => line.msg === 'initialising the embedded PostgreSQL data folder (first run)'),
      30_000,
      'the first start to initialise PostgreSQL',
    );
    first.child.kill('SIGINT');
    expect(await first.exited).toEqual({ code: 0, signal: null });
    expect(logs(first).map((line) => line.msg)).toEqual(match.arrayContaining(['embedded PostgreSQL stopped', 'stopped']));
    expect(logs(first).filter((line) => line.msg.startsWith('listening on'))).toEqual([]);
    // Nothing left running, and nothing half made: the folder serves as if the first start had ended.
    expect(existsSync(path.join(folder, 'postgres.owner'))).toBe(false);
    const second = startProcess({ DATA_DIR: folder, PORT: '0' });
    const port = await waitUntilListening(second);
    expect((await httpJson(`http://127.0.0.1:${port}/health`)).status).toBe(200);
    second.child.kill('SIGTERM');
    expect(await second.exited).toEqual({ code: 0, signal: null });
  });

  it('reuses the data on a second start', async () => {
    const run = startProcess({ DATA_DIR: dataDir, PORT: '0' });
    const port = await waitUntilListening(run);

    const messages = logs(run).map((line) => line.msg);
    expect(messages).not.toContain('initialising the embedded PostgreSQL data folder (first run)');
    expect(messages.some((msg) => msg.includes('taking it over'))).toBe(false);
    expect(await gql(port, READ_USER, { id: user.id })).toEqual({ user });

    const pgPid = await postgresPid(dataDir);
    run.child.kill('SIGINT');
    expect(await run.exited).toEqual({ code: 0, signal: null });
    await waitFor(() => pidGone(pgPid), 10_000, `PostgreSQL ${pgPid} to be gone`);
    expect(run.stderr).toBe('');
  });

  it('refuses a second service on the same data folder in one sentence; commands still work beside the first', async () => {
    const first = startProcess({ DATA_DIR: dataDir, PORT: '0' });
    const port = await waitUntilListening(first);

    const second = startProcess({ DATA_DIR: dataDir, PORT: '0' });
    expect(await second.exited).toEqual({ code: 1, signal: null });
    expect(second.stderr).toBe(
      `portico: cannot start: Another Portico service (process ${first.child.pid}) is running on the embedded PostgreSQL in ${dataDir}; set DATABASE_URL to share a database (as an API and a worker run apart), or DATA_DIR to a folder of its own to run apart.\n`,
    );

    const listed = await listKeys(dataDir);
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as unknown[]).length).toBeGreaterThan(0);
    // The command left the server running under the service.
    expect(await gql(port, READ_USER, { id: user.id })).toEqual({ user });

    const pgPid = await postgresPid(dataDir);
    first.child.kill('SIGINT');
    expect(await first.exited).toEqual({ code: 0, signal: null });
    await waitFor(() => pidGone(pgPid), 10_000, `PostgreSQL ${pgPid} to be gone`);
  });

  it('starts again the PostgreSQL it lost, on its data, and serves again by itself', async () => {
    const run = startProcess({ DATA_DIR: dataDir, PORT: '0' });
    const port = await waitUntilListening(run);
    expect(await gql(port, READ_USER, { id: user.id })).toEqual({ user });
    const lost = await postgresPid(dataDir);
    process.kill(lost, 'SIGKILL');

    const restarted = await waitFor(
      async () => {
        const pid = await postgresPid(dataDir).catch(() => undefined);
        return pid !== undefined && pid !== lost && !pidGone(pid) && pid;
      },
      30_000,
      'a new PostgreSQL on the folder',
    );
    // The pool heals on its own: the data written before the loss, and a write after it.
    await waitFor(async () => (await httpJson(`http://127.0.0.1:${port}/ready`)).status === 200, 30_000, 'the service to be ready again');
    expect(await gql(port, READ_USER, { id: user.id })).toEqual({ user });
    const email = 'startup-after-restart@example.com';
    const created = await gql<{ createUser: { id: string } }>(port, CREATE_USER, { input: { name: 'After Restart', email } });
    expect(await gql(port, READ_USER, { id: created.createUser.id })).toEqual({ user: { id: created.createUser.id, email } });
    expect(logs(run).find((line) => line.msg === 'the embedded PostgreSQL stopped unexpectedly; starting it again')).toMatchObject({
      level: 50,
      pid: lost,
    });
    expect(await fs.readFile(path.join(dataDir, 'postgres.owner'), 'utf8')).toBe(`${run.child.pid}\nservice\n`);

    // And stops the new one with itself.
    run.child.kill('SIGTERM');
    expect(await run.exited).toEqual({ code: 0, signal: null });
    await waitFor(() => pidGone(restarted), 10_000, `PostgreSQL ${restarted} to be gone`);
  });

  it('refuses a command, and a second service, on a folder whose running service lost its PostgreSQL', async () => {
    const folder = await makeTempDir();
    // Held down, so that the commands below meet the moments before the service starts it again.
    const first = startProcess({ DATA_DIR: folder, PORT: '0', PORTICO_FAILPOINTS: 'keep-lost-postgres-down' });
    // Started to the end: a start that loses its database fails and exits, and owns nothing then.
    await waitFor(() => logs(first).some((line) => line.msg === 'webhook worker started'), 45_000, 'the start to end');
    const pgPid = await postgresPid(folder);
    process.kill(pgPid, 'SIGKILL');
    await waitFor(() => pidGone(pgPid), 10_000, `PostgreSQL ${pgPid} to be gone`);
    const refusal = `The Portico service (process ${first.child.pid}) on ${folder} has lost its embedded PostgreSQL and is starting it again; try again in a moment.`;

    // Starting another server under the service would take the folder from it: the next start would
    // no longer see the service, and two services would run on one folder.
    const listed = await listKeys(folder);
    expect([listed.code, listed.stderr]).toEqual([1, `portico: cannot start: ${refusal}\n`]);
    const second = startProcess({ DATA_DIR: folder, PORT: '0' });
    expect(await second.exited).toEqual({ code: 1, signal: null });
    expect(second.stderr).toBe(`portico: cannot start: ${refusal}\n`);
    expect(await fs.readFile(path.join(folder, 'postgres.owner'), 'utf8')).toBe(`${first.child.pid}\nservice\n`);

    first.child.kill('SIGTERM');
    expect(await first.exited).toEqual({ code: 0, signal: null });
  });

  it('takes over the PostgreSQL left running by a SIGKILLed run, and stops it on SIGTERM', async () => {
    const crashed = startProcess({ DATA_DIR: dataDir, PORT: '0' });
    await waitUntilListening(crashed);
    const pgPid = await postgresPid(dataDir);
    crashed.child.kill('SIGKILL');
    expect(await crashed.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(pidGone(pgPid)).toBe(false);

    const run = startProcess({ DATA_DIR: dataDir, PORT: '0' });
    const port = await waitUntilListening(run);

    const takeover = logs(run).find((line) => line.msg.includes('taking it over'));
    expect(takeover).toMatchObject({ level: 40, pid: pgPid });
    expect(await postgresPid(dataDir)).toBe(pgPid);
    expect(await httpJson(`http://127.0.0.1:${port}/ready`)).toEqual({
      status: 200,
      body: { status: 'ready', database: { available: true, outages: 0 }, rateLimits: { degraded: false, unmeteredRequests: 0 } },
    });
    expect(await gql(port, READ_USER, { id: user.id })).toEqual({ user });

    run.child.kill('SIGTERM');
    expect(await run.exited).toEqual({ code: 0, signal: null });
    await waitFor(() => pidGone(pgPid), 10_000, `PostgreSQL ${pgPid} to be gone`);
    expect(run.stderr).toBe('');
  });
});

describe('logs', { timeout: 60_000 }, () => {
  it('are readable lines with LOG_FORMAT=pretty (the default on a terminal in development), JSON otherwise', async () => {
    const run = startProcess({ DATA_DIR: await makeTempDir(), PORT: '0', LOG_FORMAT: 'pretty' });
    const line = await waitFor(() => run.stdout.find((text) => text.includes('listening on http://')), 45_000, 'the listening line');
    expect(line).toMatch(/INFO/);
    expect(() => JSON.parse(line) as unknown).toThrow();
    run.child.kill('SIGINT');
    expect(await run.exited, run.stderr + run.stdout.join('\n')).toEqual({ code: 0, signal: null });
  });
});

describe('start failures', { timeout: 60_000 }, () => {
  /** Runs the entry point, expects exit code 1 and returns the single line it wrote to stderr. */
  async function expectStartFailure(env: Record<string, string>): Promise<{ line: string; run: Run }> {
    const run = startProcess(env);
    const exit = await run.exited;
    expect(exit, `stderr: ${run.stderr}`).toEqual({ code: 1, signal: null });
    expect(run.stderr).not.toContain('    at ');
    expect(run.stderr.endsWith('\n')).toBe(true);
    const lines = run.stderr.slice(0, -1).split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]!.trim()).not.toBe('');
    return { line: lines[0]!, run };
  }

  it('reports a port already in use, after stopping the PostgreSQL it started', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, resolve));
    try {
      const { port } = blocker.address() as net.AddressInfo;
      const dataDir = await makeTempDir();
      const { line, run } = await expectStartFailure({ DATA_DIR: dataDir, PORT: String(port) });
      expect(line).toMatch(/^portico: cannot start: /);
      // The one sentence alone: no warning (with its stack) from what it closed on the way out.
      expect(logs(run).filter((entry) => entry.level >= 40)).toEqual([]);
      expect(line).toContain(String(port));
      expect(line).toContain('PORT');
      // PostgreSQL deletes postmaster.pid as it shuts down; the run waits for that before exiting.
      expect(existsSync(path.join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
      // The first development key was not made by the start that failed: the next one shows it.
      expect(run.stderr).not.toMatch(/pk_test_/);
      const next = startProcess({ DATA_DIR: dataDir, PORT: '0' });
      try {
        await waitUntilListening(next);
        await waitFor(() => /pk_test_[0-9A-Za-z]{33}/.exec(next.stderr)?.[0], 10_000, 'the first key on stderr');
      } finally {
        next.child.kill('SIGTERM');
        await next.exited;
      }
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('reports a METRICS_PORT already in use as such, in one sentence', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = blocker.address() as net.AddressInfo;
      const { line } = await expectStartFailure({
        DATA_DIR: await makeTempDir(),
        PORT: '0',
        METRICS_PORT: String(port),
      });
      expect(line).toBe(
        `portico: cannot start: Port ${port} on 127.0.0.1 is already in use; stop the other process or set METRICS_PORT to a free port.`,
      );
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('reports a METRICS_PORT equal to PORT as a configuration error', async () => {
    const port = String(await freePort());
    const { line } = await expectStartFailure({ DATA_DIR: await makeTempDir(), PORT: port, METRICS_PORT: port });
    expect(line).toBe(`portico: configuration error: METRICS_PORT must differ from PORT (both ${port}).`);
  });

  it('reports a PORT that is not a number', async () => {
    const { line } = await expectStartFailure({ DATA_DIR: await makeTempDir(), PORT: 'abc' });
    expect(line).toMatch(/^portico: configuration error: /);
    expect(line).toContain('PORT');
  });

  it('reports a DATABASE_URL whose server refuses the connection, without echoing the password', async () => {
    const closedPort = await freePort();
    const env = {
      DATA_DIR: await makeTempDir(),
      PORT: '0',
      DATABASE_URL: `postgres://u:secretpw@127.0.0.1:${closedPort}/x`,
    };
    const { line, run } = await expectStartFailure(env);
    expect(line).toMatch(/^portico: cannot start: /);
    expect(line).toContain('refused');
    expect(line).toContain('DATABASE_URL');
    expect(line).not.toContain('secretpw');
    expect(run.stdout.join('\n')).not.toContain('secretpw');
    // The one sentence alone: no line saying that requests will answer 503, from a service that exits.
    expect(logs(run).filter((entry) => entry.level >= 40)).toEqual([]);
  });

  it('reads sslmode=require as node-postgres does today (TLS, the certificate checked), without its warning', async () => {
    const database = await createEmptyDatabase();
    try {
      const url = new URL(database.url);
      url.searchParams.set('sslmode', 'require');
      const env = { DATA_DIR: await makeTempDir(), PORT: '0', DATABASE_URL: url.toString() };
      // The test server offers no TLS: the start stops with its one sentence, and nothing else.
      const { line } = await expectStartFailure(env);
      expect(line).toMatch(/^portico: cannot start: .*SSL.*DATABASE_URL/);
    } finally {
      await database.drop();
    }
  });

  it('reports a DATA_DIR that cannot be created', async () => {
    const file = path.join(await makeTempDir(), 'a-file');
    await fs.writeFile(file, '');
    const dataDir = path.join(file, 'data');
    const { line } = await expectStartFailure({ DATA_DIR: dataDir, PORT: '0' });
    expect(line).toMatch(/^portico: cannot start: /);
    expect(line).toContain(dataDir);
    expect(line).toContain('DATA_DIR');
  });

  it('reports a DATABASE_URL that is not PostgreSQL as a configuration error', async () => {
    const { line } = await expectStartFailure({ DATA_DIR: await makeTempDir(), PORT: '0', DATABASE_URL: 'mysql://x' });
    expect(line).toMatch(/^portico: configuration error: /);
    expect(line).toContain('DATABASE_URL');
  });
});
