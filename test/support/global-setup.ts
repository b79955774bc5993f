// Starts PostgreSQL once per test run (embedded, unless DATABASE_URL names one) and prepares a
// migrated template database; each test file then clones its own database from the template.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/db/embedded-postgres.ts';
import { migrate, openOrm } from '../../src/db/orm.ts';
import { createLogger } from '../../src/log.ts';
import { credentialsInLogs } from './credentials.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A URL whose user may create databases; the database part is replaced per test file. */
    adminUrl: string;
    templateDatabase: string;
    /** Where test servers append their log lines and tests the credentials they used (see credentials.ts). */
    auditDir: string;
  }
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const logger = createLogger('warn');
  let embedded: EmbeddedPostgres | undefined;
  let dataDir: string | undefined;
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'portico-test-pg-'));
    await fs.chmod(dataDir, 0o755);
    embedded = await startEmbeddedPostgres(dataDir, logger);
    adminUrl = embedded.url('postgres');
  }

  const template = `portico_template_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${template}`);
  const templateUrl = withDatabase(adminUrl, template);
  const orm = await openOrm(templateUrl, { poolMax: 2, logger });
  await migrate(orm, logger, templateUrl);
  await orm.close();

  project.provide('adminUrl', adminUrl);
  project.provide('templateDatabase', template);
  const auditDir = await fs.mkdtemp(path.join(os.tmpdir(), 'portico-test-audit-'));
  project.provide('auditDir', auditDir);

  return async () => {
    const leaks = credentialsInLogs(auditDir);
    await fs.rm(auditDir, { recursive: true, force: true });
    await admin.query(`drop database if exists ${template} with (force)`);
    await admin.end();
    await embedded?.stop();
    if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
    // Fails the run: no log line of any test server may hold a whole key or token a test used.
    if (leaks.length > 0) throw new Error(`credentials found in server logs (masked here): ${leaks.join(', ')}`);
  };
}
