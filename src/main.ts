// Entry point: `node src/main.ts [api]`. Starts the API on its database and shuts down cleanly on
// SIGINT/SIGTERM: stop accepting, drain in-flight requests, close the pool, stop embedded PostgreSQL.
import { createApp } from './server.ts';
import { CursorCodec } from './pagination/cursor.ts';
import { resolveSecret } from './secrets.ts';
import { exitWithStartupFailure, start } from './startup.ts';

const ROLES = ['all', 'api'] as const;
const role = process.argv[2] ?? 'all';
if (!(ROLES as readonly string[]).includes(role)) {
  process.stderr.write(`portico: unknown role "${role}"; use one of: ${ROLES.join(', ')}.\n`);
  process.exit(2);
}

let shuttingDown = false;
let stop: () => Promise<void> = async () => undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (shuttingDown) {
      process.stderr.write('portico: second signal, exiting at once.\n');
      process.exit(130);
    }
    shuttingDown = true;
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`portico: error while shutting down: ${String(error)}\n`);
        process.exit(1);
      },
    );
  });
}

try {
  const { config, logger, db } = await start({ migrate: true });
  stop = () => db.close();
  const cursors = new CursorCodec(await resolveSecret(config.cursorSecret, config.dataDir, 'cursor-secret'));
  const app = createApp({ config, logger, orm: db.orm, cursors });
  const address = await app.listen();
  stop = async () => {
    logger.info('shutting down: draining requests');
    await app.close();
    await db.close();
    logger.info('stopped');
    // Logs are written asynchronously; let the last lines out before the process exits.
    await new Promise<void>((resolve) => logger.flush(() => resolve()));
  };
  const shown = address.address === '0.0.0.0' || address.address === '::' ? 'localhost' : address.address;
  logger.info({ port: address.port }, `listening on http://${shown}:${address.port}/graphql`);
} catch (error) {
  await stop().catch(() => undefined);
  exitWithStartupFailure(error);
}
