// PostGraphile 4 serving the same database as Portico, for `npm run bench` only.
// Usage: node server.js DATABASE_URL PORT POOL_MAX; prints "listening" when it serves.
import http from 'node:http';
import pg from 'pg';
import { postgraphile } from 'postgraphile';

const [url, port, poolMax] = process.argv.slice(2);
const pool = new pg.Pool({ connectionString: url, max: Number(poolMax) });
const handler = postgraphile(pool, 'public', {
  graphqlRoute: '/graphql',
  graphiql: false,
  disableQueryLog: true,
  enableQueryBatching: false,
  retryOnInitFail: false,
  setofFunctionsContainNulls: false,
  ignoreRBAC: false,
});
http.createServer(handler).listen(Number(port), '127.0.0.1', () => process.stdout.write('listening\n'));
