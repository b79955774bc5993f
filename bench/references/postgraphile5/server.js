// PostGraphile 5 serving the same database as Portico, for `npm run bench` only.
// Usage: node server.js DATABASE_URL PORT POOL_MAX; prints "listening" when it serves.
import http from 'node:http';
import pg from 'pg';
import { postgraphile } from 'postgraphile';
import { makePgService } from 'postgraphile/adaptors/pg';
import { grafserv } from 'postgraphile/grafserv/node';
import { PostGraphileAmberPreset } from 'postgraphile/presets/amber';

const [url, port, poolMax] = process.argv.slice(2);
const pool = new pg.Pool({ connectionString: url, max: Number(poolMax) });
const pgl = postgraphile({
  extends: [PostGraphileAmberPreset],
  pgServices: [makePgService({ pool, schemas: ['public'] })],
  grafserv: { graphqlPath: '/graphql', watch: false, graphiql: false },
  grafast: { explain: false },
});
const serv = pgl.createServ(grafserv);
const server = http.createServer();
serv.addTo(server);
await serv.ready();
server.listen(Number(port), '127.0.0.1', () => process.stdout.write('listening\n'));
