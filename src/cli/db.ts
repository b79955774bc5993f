// `npm run db:migrate`: applies pending migrations to the configured database (embedded or DATABASE_URL).
import { exitWithStartupFailure, start } from '../startup.ts';

const command = process.argv[2];
if (command !== 'migrate') {
  process.stderr.write('usage: node src/cli/db.ts migrate\n');
  process.exit(2);
}
try {
  const { db, logger } = await start({ migrate: true });
  logger.info('database is up to date');
  await db.close();
} catch (error) {
  exitWithStartupFailure(error);
}
