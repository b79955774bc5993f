// `npm run db:migrate`: applies pending migrations to the configured database (embedded or
// DATABASE_URL) and says so in plain text (`--json` for machines).
import { describeUrl } from '../db/orm.ts';
import { commandLine, usageError, withDatabase } from './command-line.ts';

const USAGE = 'usage: npm run db:migrate [-- --json]';
const { values, positionals } = commandLine(USAGE, { json: { type: 'boolean', default: false } });
const [command, ...rest] = positionals;
if (command !== 'migrate' || rest.length > 0)
  usageError(USAGE, command === undefined ? 'a command is required' : `unknown command "${[command, ...rest].join(' ')}"`);

await withDatabase({ usage: USAGE, flags: {} }, ({ db }) => {
  const where = `postgres://${describeUrl(db.url)}`;
  process.stdout.write(
    values.json ? `${JSON.stringify({ upToDate: true, database: where })}\n` : `the database at ${where} is up to date\n`,
  );
  return Promise.resolve();
});
