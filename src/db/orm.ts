import { MikroORM, type Options } from '@mikro-orm/postgresql';
import type pg from 'pg';
import { ormOptions } from '../../mikro-orm.config.ts';
import { StartupError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { DatabaseAvailability } from './availability.ts';
import { boundedConnectionOptions, guardPool, watchReplies, type ConnectionBounds } from './connections.ts';
import { planStatementsOnce } from './generic-plans.ts';
import { preparesPlannedStatements } from './plain-text.ts';
import { preparesMarkedStatements } from './prepared.ts';
import { foldsTransactionEdges } from './transaction-edges.ts';
import { withMigrationLock } from './migration-lock.ts';
import { errnoOf } from '../guards.ts';

export type { MikroORM };
export type { EntityManager } from '@mikro-orm/postgresql';

export interface OrmSettings {
  poolMax: number;
  /** Bounds on every wait for PostgreSQL (see connections.ts); unset leaves node-postgres's (none). */
  bounds?: ConnectionBounds;
  /** Told when connections fail and when statements succeed again. */
  availability?: DatabaseAvailability;
  logger: Logger;
  /** Observes every SQL statement (tests count them). */
  onQuery?: (sql: string) => void;
}

/** Where the URL points, without its credentials (in its user info or its query), for messages. */
export function describeUrl(url: string): string {
  try {
    const { hostname, port, pathname } = new URL(url);
    return `${hostname}:${port || 5432}${pathname}`;
  } catch {
    return 'DATABASE_URL';
  }
}

function connectionFailure(url: string, reason: string | undefined, code: string | undefined): StartupError {
  const where = describeUrl(url);
  switch (code) {
    case 'ECONNREFUSED':
      return new StartupError(`PostgreSQL at ${where} refused the connection; start it, or fix DATABASE_URL.`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new StartupError(`The PostgreSQL host in DATABASE_URL (${where}) cannot be resolved; fix the host name.`);
    case '28P01':
    case '28000':
      return new StartupError(`PostgreSQL at ${where} rejected the user name or password; fix the credentials in DATABASE_URL.`);
    case '3D000':
      return new StartupError(`The database in DATABASE_URL (${where}) does not exist; create it (createdb) or fix the name.`);
    default:
      return new StartupError(
        `Cannot connect to PostgreSQL at ${where} (${reason ?? code ?? 'unknown reason'}); check that it runs and that DATABASE_URL is right.`,
      );
  }
}

/**
 * Where PostgreSQL's notices on an ORM's connections go while its migrations run: a migration that
 * keeps a rule rather than lose data says so with RAISE WARNING, which otherwise reached only the
 * server's own log. Set by `migrate` for its run.
 */
const migrationNotices = new WeakMap<MikroORM, { logger: Logger | undefined }>();

export async function openOrm(url: string, settings: OrmSettings): Promise<MikroORM> {
  const { onQuery } = settings;
  const notices: { logger: Logger | undefined } = { logger: undefined };
  const overrides: Partial<Options> = {
    pool: { min: 0, max: settings.poolMax },
    driverOptions: {
      // The whole URL, read as node-postgres reads one (sslmode, application_name, options …), as
      // every other connection here reads it: MikroORM on its own keeps only the host, port, user,
      // password and database, so a pool asked for TLS would have talked in plain text.
      connectionString: url,
      ...(settings.bounds ? boundedConnectionOptions(settings.bounds) : {}),
      // Run by the pool on each new connection before it is handed out, and before the wrappers below
      // (installed on the pool's 'connect') exist: its statement goes out on the connection as it is.
      onConnect: planStatementsOnce,
      onPoolCreated: (pool: pg.Pool) => {
        pool.on('connect', (client) =>
          client.on('notice', (notice) => {
            const level = notice.severity === 'WARNING' ? 'warn' : 'info';
            notices.logger?.[level]({ severity: notice.severity, detail: notice.detail }, `PostgreSQL, while migrating: ${notice.message}`);
          }),
        );
        guardPool(pool, settings.availability);
        if (settings.bounds) watchReplies(pool, settings.bounds);
        preparesMarkedStatements(pool);
        preparesPlannedStatements(pool);
        foldsTransactionEdges(pool);
      },
    },
    debug: false,
    ...(onQuery ? { onQuery: (sql: string) => (onQuery(sql), sql) } : {}),
  };
  const orm = await MikroORM.init(ormOptions(url, overrides));
  migrationNotices.set(orm, notices);
  await orm.connect();
  const check = await orm.checkConnection();
  if (!check.ok) {
    await orm.close(true).catch(() => undefined);
    const cause = check.error;
    // AggregateError from a dual-stack connect carries the codes on its members.
    const code = errnoOf(cause) ?? errnoOf(cause instanceof AggregateError ? cause.errors[0] : undefined);
    throw connectionFailure(url, check.reason, code);
  }
  return orm;
}

/** Applies the pending migrations, one process at a time per database (db/migration-lock.ts); the names of those applied here. */
export async function migrate(orm: MikroORM, logger: Logger, url: string, bounds?: ConnectionBounds): Promise<string[]> {
  const notices = migrationNotices.get(orm);
  if (notices) notices.logger = logger;
  let applied;
  try {
    applied = await withMigrationLock(url, bounds, logger, () => orm.migrator.up());
  } finally {
    if (notices) notices.logger = undefined;
  }
  for (const migration of applied) logger.info({ migration: migration.name }, 'migration applied');
  return applied.map((migration) => migration.name);
}
