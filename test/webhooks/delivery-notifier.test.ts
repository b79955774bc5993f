// Waking the delivery workers: a write that queued deliveries wakes them once it has committed, on
// both faces and with an Idempotency-Key; a write that queued none does not; however many writes ask
// at once, one notification is on its way at a time; and one PostgreSQL does not answer is given up
// within the bound, after which notifications go out again.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Sql } from '../../src/db/sql.ts';
import { createLogger } from '../../src/log.ts';
import { requestContext, type RequestContext } from '../../src/request-context.ts';
import { createOrder } from '../../src/services/orders.ts';
import { DELIVERIES_CHANNEL, DeliveryNotifier } from '../../src/webhooks/delivery-notifier.ts';
import { testPool } from '../support/database.ts';
import { startDeliveryRig, type DeliveryRig } from '../support/delivery-rig.ts';
import { usedCredential } from '../support/credentials.ts';
import { rest, type Order, type User } from '../support/rest.ts';
import { eventually } from '../support/steady-load.ts';
import { boundedPool } from '../support/bounded-pool.ts';
import { captureLogs } from '../support/captured-logs.ts';
import { proxiedTestDatabase } from '../support/proxied-database.ts';

let rig: DeliveryRig;
// A database of its own behind a proxy that can cut it off.
const proxied = proxiedTestDatabase();

beforeAll(async () => {
  // The worker polls once as it starts and then not for ten minutes: only a notification brings it
  // a delivery queued during the test.
  rig = await startDeliveryRig({}, { pollMs: 600_000 });
  await subscribe(['ORDER_CREATED']);
});
afterAll(() => rig?.close());

/** Notifications on the workers' channel of a database (the rig's unless told), as a worker hears them. */
async function listening(url = rig.server.databaseUrl): Promise<{ heard: string[]; close(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const heard: string[] = [];
  client.on('notification', (message) => {
    if (message.channel === DELIVERIES_CHANNEL) heard.push(message.payload ?? '');
  });
  await client.query(`listen ${DELIVERIES_CHANNEL}`);
  return { heard, close: () => client.end() };
}

let users = 0;
async function createUser(): Promise<User> {
  const response = await rest<User>(rig.server, 'POST', '/users', {
    json: { name: 'Wake Test', email: `wake-${process.pid}-${++users}@example.com` },
  });
  expect(response.status).toBe(201);
  return response.body;
}

/** Subscribes an endpoint at the receiver to `events` (their GraphQL names); resolves once its registration ping arrived. */
async function subscribe(events: string[]): Promise<void> {
  const path = `/wake/${events.join('-')}`;
  const response = await rest<{ id: string; secret: string }>(rig.server, 'POST', '/webhook-endpoints', {
    json: { url: `${rig.receiver.url}${path}`, events },
  });
  expect(response.status, response.text).toBe(201);
  usedCredential(response.body.secret);
  await eventually(() => rig.receiver.received.some((request) => request.path === path), 'the registration ping', 10_000);
}

const arrivedFor = (orderId: string) =>
  rig.receiver.received.some(
    (request) => (JSON.parse(request.body) as { data?: { object?: { id?: string } } }).data?.object?.id === orderId,
  );

describe('a write that queued a delivery', () => {
  it('wakes the workers once committed: REST, GraphQL, and a write with an Idempotency-Key', async () => {
    const user = await createUser();
    const viaRest = await rest<Order>(rig.server, 'POST', `/users/${user.id}/orders`, { json: { total: 100 } });
    const viaGraphQL = await rig.server.gql<{ createOrder: { id: string } }>(
      'mutation ($input: CreateOrderInput!) { createOrder(input: $input) { id } }',
      { input: { userId: user.id, total: 200 } },
    );
    const keyed = await rest<Order>(rig.server, 'POST', `/users/${user.id}/orders`, {
      json: { total: 300 },
      headers: { 'idempotency-key': `wake-${process.pid}` },
    });
    const ids = [viaRest.body.id, viaGraphQL.body.data!.createOrder.id, keyed.body.id];
    await eventually(() => ids.every(arrivedFor), 'every order.created delivery', 10_000);
  });
});

describe('the outbox', () => {
  it('notes on the request whether it queued deliveries', async () => {
    const user = await createUser();
    const queued = async (total: number) => {
      const context: RequestContext = { requestId: `wake-${total}` };
      await requestContext.run(context, () => createOrder(rig.server.orm.em, { userId: user.id, total }));
      return context.deliveriesQueued === true;
    };
    // Subscribed to order.created; then to nothing, once every endpoint is disabled.
    expect(await queued(1)).toBe(true);
    await rig.server.orm.em.fork().execute(`update webhook_endpoints set enabled = false`);
    try {
      expect(await queued(2)).toBe(false);
    } finally {
      await rig.server.orm.em.fork().execute(`update webhook_endpoints set enabled = true`);
    }
  });
});

describe('the notifier', () => {
  it('sends one notification at a time: fifty calls during one send make one more, after it', async () => {
    const listener = await listening();
    const pool = testPool({ connectionString: rig.server.databaseUrl, max: 2 });
    let sent = 0;
    const notifier = new DeliveryNotifier(new Sql(pool, () => sent++), createLogger('silent'));
    try {
      for (let i = 0; i < 50; i++) notifier.notify();
      await eventually(() => listener.heard.length >= 2, 'two notifications', 10_000);
      // A notification of the test's own, sent after both, arrives after both: nothing else came.
      await pool.query(`select pg_notify('${DELIVERIES_CHANNEL}', 'marker')`);
      await eventually(() => listener.heard.includes('marker'), 'the marker', 10_000);
      expect(listener.heard).toEqual(['', '', 'marker']);
      expect(sent).toBe(2);
      notifier.notify();
      await eventually(() => listener.heard.length === 4, 'a notification for a later call', 10_000);
    } finally {
      await listener.close();
      await pool.end();
    }
  });

  it('gives up a notification PostgreSQL does not answer within the bound, and notifies again once it answers', async () => {
    const listener = await listening(proxied.directUrl);
    const { logger, logs } = captureLogs('debug');
    const pool = boundedPool(proxied.url, { connectTimeoutMs: 1000, statementTimeoutMs: 400 });
    const notifier = new DeliveryNotifier(new Sql(pool), logger);
    const givenUp = () => logs.filter((log) => String(log.msg).startsWith('could not wake the delivery workers')).length;
    try {
      await pool.query('select 1');
      await proxied.proxy.set('blackhole');
      // Never answered: given up after the reply bound (the statement timeout and a second), quietly.
      expect(() => notifier.notify()).not.toThrow();
      await eventually(() => givenUp() === 1, 'the unanswered notification given up', 10_000);
      await proxied.proxy.set('pass');
      // Calls while PostgreSQL is back reach the workers: the notifier did not stop at the failure.
      await eventually(
        () => {
          notifier.notify();
          return listener.heard.length > 0;
        },
        'a notification once PostgreSQL answers',
        10_000,
      );
      expect(listener.heard[0]).toBe('');
    } finally {
      await proxied.proxy.set('pass');
      await listener.close();
      await pool.end();
    }
  });
});
