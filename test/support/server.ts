// A real server on a free port against a fresh database, spoken to over HTTP like any client would.
import { Writable } from 'node:stream';
import { loadConfig, type Config } from '../../src/config.ts';
import { openOrm, type MikroORM } from '../../src/db/orm.ts';
import { CursorCodec } from '../../src/pagination/cursor.ts';
import { createApp } from '../../src/server.ts';
import { createLogger } from '../../src/log.ts';
import { createTestDatabase } from './database.ts';

export interface GraphQLResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: {
    data?: T | null;
    errors?: {
      message: string;
      path?: string[];
      extensions: { code: string; type?: string; errors?: { field: string; message: string }[] };
    }[];
  };
}

export interface TestServer {
  url: string;
  orm: MikroORM;
  /** Every SQL statement the server ran, in order. */
  statements: string[];
  /** Every log line the server wrote, parsed. */
  logs: Record<string, unknown>[];
  gql<T = Record<string, unknown>>(
    query: string,
    variables?: Record<string, unknown>,
    headers?: Record<string, string>,
  ): Promise<GraphQLResponse<T>>;
  close(): Promise<void>;
}

export const TEST_CURSOR_SECRET = 'test-cursor-secret-that-is-long-enough-0123456789';

export async function startTestServer(overrides: Partial<Config> = {}): Promise<TestServer> {
  const database = await createTestDatabase();
  const config = { ...loadConfig({ LOG_LEVEL: 'debug' }), databaseUrl: database.url, shutdownGraceMs: 2000, ...overrides };
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger(
    'debug',
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    }),
  );
  const statements: string[] = [];
  const orm = await openOrm(database.url, { poolMax: 5, logger, onQuery: (sql) => statements.push(sql) });
  const app = createApp({ config, logger, orm, cursors: new CursorCodec(TEST_CURSOR_SECRET) });
  const address = await app.listen(0, '127.0.0.1');
  const url = `http://127.0.0.1:${address.port}`;

  return {
    url,
    orm,
    statements,
    logs,
    async gql(query, variables, headers = {}) {
      const response = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
        body: JSON.stringify({ query, variables }),
      });
      return { status: response.status, headers: response.headers, body: (await response.json()) as GraphQLResponse['body'] } as never;
    },
    async close() {
      await app.close();
      await orm.close();
      await database.drop();
    },
  };
}
