// Clients that pipeline requests on one connection, and clients that stop reading their answers:
// one connection runs its requests one at a time, in order, and an answer not taken within the
// request deadline has its connection cut, rather than held in the process's memory.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { eventually } from '../support/steady-load.ts';

let server: TestServer;

beforeAll(async () => {
  const defaults = loadConfig({});
  // Pages of a hundred users with a hundred orders each, past the default cost limit: answers of a megabyte and more.
  server = await startTestServer({ requestTimeoutMs: 2000, queryLimits: { ...defaults.queryLimits, maxCost: 200_000 } });
});
afterAll(() => server.close());

function post(path: string, body: string, extra = ''): string {
  return `POST ${path} HTTP/1.1\r\nHost: x\r\nx-api-key: ${server.apiKey}\r\ncontent-type: application/json\r\n${extra}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

async function connect(): Promise<net.Socket> {
  const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.on('error', () => {});
  return socket;
}

describe('a pipelining client', () => {
  it('has its requests run one at a time, in order: a read sent after a write sees it', async () => {
    const created = await server.gql<{ createUser: { id: string } }>(
      'mutation { createUser(input: { name: "Before", email: "pipelined@example.com" }) { id } }',
    );
    const id = created.body.data!.createUser.id;
    // Five writes in one document (slower than the read behind it), then the read, back to back on one connection.
    const writes = Array.from({ length: 5 }, (_, i) => `u${i}: updateUser(id: "${id}", input: { name: "After ${i}" }) { id }`).join(' ');
    const socket = await connect();
    let received = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
    socket.write(
      post('/graphql', JSON.stringify({ query: `mutation { ${writes} }` })) +
        `GET /users/${id} HTTP/1.1\r\nHost: x\r\nx-api-key: ${server.apiKey}\r\nconnection: close\r\n\r\n`,
    );
    await new Promise((resolve) => socket.once('close', resolve));
    const answers = received.split(/(?=HTTP\/1\.1 )/);
    expect(answers.map((answer) => answer.slice(0, 12))).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200']);
    expect(answers[1]).toContain('"name":"After 4"');
  });
});

describe('a client that stops reading', () => {
  it('has its connection cut once its answer is not taken within the request deadline', async () => {
    // Answers of some megabytes each: more than the socket's buffers hold.
    await server.orm.em.fork().execute(
      `insert into users (id, name, email, created_at, updated_at)
       select 'usr_01m8' || lpad(to_hex(n), 22, '0'), 'Reader ' || n, 'reader' || n || '@example.com', now(), now() from generate_series(1, 100) n`,
    );
    await server.orm.em.fork().execute(
      `insert into orders (id, user_id, total, status, created_at)
       select 'ord_01m8' || lpad(to_hex(u * 1000 + o), 22, '0'), 'usr_01m8' || lpad(to_hex(u), 22, '0'), o, 'pending', now()
       from generate_series(1, 100) u, generate_series(1, 100) o`,
    );
    const query = JSON.stringify({
      query: '{ users(first: 100) { edges { node { id name email createdAt orders(limit: 100) { id total status createdAt userId } } } } }',
    });
    const socket = await connect();
    socket.pause();
    const closed = new Promise((resolve) => socket.once('close', resolve));
    for (let i = 0; i < 20; i++) socket.write(post('/graphql', query));
    const before = server.logs.length;
    await eventually(
      () =>
        server.logs.slice(before).some((line) => line.msg === 'the client did not take its answer within the deadline; connection closed'),
      'the connection to be cut',
      30_000,
    );
    socket.resume();
    await closed;
    // The service serves others meanwhile and after.
    expect((await server.fetch('/users?limit=1')).status).toBe(200);
  });
});
