// Webhook delivery: signed (verified by independent libraries), retried on the schedule, dead-lettered,
// re-sent by hand; every failure mode of a receiver; a worker killed mid-delivery and a database that
// drops its connections; two workers sharing one queue.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { verify as octokitVerify } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../src/webhooks/secret-box.ts';
import { verifyWebhookSignature } from '../../src/webhooks/verify.ts';
import { usedCredential } from '../support/credentials.ts';
import { runs } from '../support/long-mode.ts';
import { match } from '../support/match.ts';
import { startReceiver, type Answer, type Receiver, type Received } from '../support/receiver.ts';
import { localWebhooks, startDeliveryRig, type DeliveryRig } from '../support/delivery-rig.ts';
import { expectProblem, rest, type User } from '../support/rest.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { eventually } from '../support/steady-load.ts';
import { ATTEMPTS_KEPT } from '../../src/webhooks/deliveries.ts';
import { RESEND_BATCH } from '../../src/services/webhook-deliveries.ts';
import { TEST_DELIVERY, startTestWorker, type TestWorker } from '../support/worker.ts';
import { startTcpProxy, type Fault, type TcpProxy } from '../support/tcp-proxy.ts';

interface Endpoint {
  id: string;
  secret: string;
}

interface Attempt {
  number: number;
  startedAt: string;
  statusCode: number | null;
  error: string | null;
  responseBody: string | null;
  signature: string;
}

interface Delivery {
  eventId: string;
  eventType: string;
  status: string;
  nextAttemptAt: string | null;
  finishedAt: string | null;
  attempts: Attempt[];
}

let rig: DeliveryRig;
let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  rig = await startDeliveryRig();
  ({ server, receiver } = rig);
});
afterAll(() => rig?.close());

let paths = 0;

/** An endpoint of its own (its own path on the receiver), subscribed to `events` (default: all). */
/** Whatever speaks HTTP to the API with a key: a test server, or the service as a process. */
type Client = Pick<TestServer, 'fetch'>;

async function register(on: Client = server, to: Receiver = receiver, events?: string[]): Promise<Endpoint & { path: string }> {
  const hookPath = `/hooks/${++paths}`;
  const response = await rest<Endpoint>(on, 'POST', '/webhook-endpoints', {
    json: { url: `${to.url}${hookPath}`, ...(events ? { events } : {}) },
  });
  if (response.status !== 201) throw new Error(response.text);
  usedCredential(response.body.secret);
  return { ...response.body, path: hookPath };
}

async function createUser(on: Client = server): Promise<User> {
  const response = await rest<User>(on, 'POST', '/users', {
    json: { name: 'Hook Test', email: `hook-${process.pid}-${Date.now()}-${Math.random()}@example.com` },
  });
  return response.body;
}

/** The requests an endpoint received for events of `type`, in order. */
const requestsAt = (hookPath: string, type?: string, to: Receiver = receiver) =>
  to.received.filter((request) => request.path === hookPath && (type === undefined || request.headers['x-portico-event-type'] === type));

async function deliveries(endpointId: string, query = '', on: Client = server): Promise<Delivery[]> {
  const response = await rest<{ items: Delivery[] }>(on, 'GET', `/webhook-endpoints/${endpointId}/deliveries${query}`);
  if (response.status !== 200) throw new Error(response.text);
  return response.body.items;
}

/** The delivery of the newest event of `type` to an endpoint, once it reached `status`. */
async function settledDelivery(endpointId: string, type: string, status: string, on: Client = server): Promise<Delivery> {
  let found: Delivery | undefined;
  await eventually(
    async () => (found = (await deliveries(endpointId, '', on)).find((d) => d.eventType === type && d.status === status)) !== undefined,
    `a ${type} delivery to be ${status}`,
    15_000,
  );
  return found!;
}

const header = (request: Received, name: string) => String(request.headers[name] ?? '');

/**
 * Answers requests for events (not the ping queued at registration) at `endpoint` with `answer`,
 * everything else with 200.
 */
function answerAt(endpoint: { path: string }, answer: (request: Received) => Answer): Receiver['answer'] {
  return (request) =>
    request.path === endpoint.path && header(request, 'x-portico-event-type') !== 'ping' ? answer(request) : { status: 200 };
}

describe('a delivery', () => {
  it('is the event as the feed shows it, signed so that independent libraries verify it', async () => {
    const endpoint = await register();
    const user = await createUser();
    await eventually(() => requestsAt(endpoint.path, 'user.created').length > 0, 'the delivery', 10_000);
    const [request] = requestsAt(endpoint.path, 'user.created');
    const event = JSON.parse(request!.body) as { id: string; data: { object: unknown } };

    expect(header(request!, 'content-type')).toBe('application/json');
    expect(header(request!, 'x-portico-event-id')).toBe(event.id);
    expect(header(request!, 'webhook-id')).toBe(event.id);
    expect(header(request!, 'x-portico-delivery-attempt')).toBe('1');
    expect(event.data.object).toEqual((await rest(server, 'GET', `/users/${user.id}`)).body);
    expect(JSON.parse(request!.body)).toEqual((await rest(server, 'GET', `/events/${event.id}`)).body);

    const signature = header(request!, 'x-portico-signature-256');
    expect(signature).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(await octokitVerify(endpoint.secret, request!.body, signature)).toBe(true);
    expect(verifyWebhookSignature(endpoint.secret, request!.body, signature)).toBe(true);
    expect(verifyWebhookSignature(`${endpoint.secret}x`, request!.body, signature)).toBe(false);
    expect(verifyWebhookSignature(endpoint.secret, `${request!.body} `, signature)).toBe(false);
    const standard = new Webhook(endpoint.secret).verify(request!.body, {
      'webhook-id': header(request!, 'webhook-id'),
      'webhook-timestamp': header(request!, 'webhook-timestamp'),
      'webhook-signature': header(request!, 'webhook-signature'),
    });
    expect(standard).toEqual(event);

    const delivered = await settledDelivery(endpoint.id, 'user.created', 'succeeded');
    expect(delivered.attempts).toEqual([match.objectContaining({ number: 1, statusCode: 200, error: null, signature })]);
    // The ping queued at registration arrived too, once (deliveries to one endpoint may be sent side
    // by side, so in either order).
    expect(
      requestsAt(endpoint.path)
        .map((r) => header(r, 'x-portico-event-type'))
        .sort(),
    ).toEqual(['ping', 'user.created']);
  });

  it('is signed with both secrets during a rotation overlap', async () => {
    const endpoint = await register();
    const rotated = await rest<Endpoint>(server, 'POST', `/webhook-endpoints/${endpoint.id}/secrets`, { json: { overlapSeconds: 600 } });
    const newSecret = usedCredential(rotated.body.secret);
    await createUser();
    await eventually(() => requestsAt(endpoint.path, 'user.created').length > 0, 'the delivery', 10_000);
    const [request] = requestsAt(endpoint.path, 'user.created');
    const signatures = header(request!, 'x-portico-signature-256').split(', ');
    expect(signatures).toHaveLength(2);
    expect(await octokitVerify(newSecret, request!.body, signatures[0]!)).toBe(true);
    expect(await octokitVerify(endpoint.secret, request!.body, signatures[1]!)).toBe(true);
    for (const secret of [newSecret, endpoint.secret]) {
      expect(verifyWebhookSignature(secret, request!.body, header(request!, 'x-portico-signature-256'))).toBe(true);
      const headers = Object.fromEntries(
        ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => [name, header(request!, name)]),
      );
      expect(() => new Webhook(secret).verify(request!.body, headers)).not.toThrow();
    }
  });

  it('goes on signing with the current secret when the old one no longer opens (the webhook key was changed)', async () => {
    const endpoint = await register();
    // Sealed under another WEBHOOK_SECRET_KEY: what every stored secret is after the key changes.
    const unreadable = new SecretBox('another-webhook-secret-key-that-is-long-enough-0123').seal('whsec_old', endpoint.id);
    await server.orm.em
      .fork()
      .execute(`update webhook_endpoints set previous_secret = ?, previous_secret_expires_at = now() + interval '1 hour' where id = ?`, [
        unreadable,
        endpoint.id,
      ]);
    await createUser();
    const delivered = await settledDelivery(endpoint.id, 'user.created', 'succeeded');
    expect(delivered.attempts).toEqual([match.objectContaining({ number: 1, statusCode: 200, error: null })]);
    const [request] = requestsAt(endpoint.path, 'user.created');
    expect(verifyWebhookSignature(endpoint.secret, request!.body, header(request!, 'x-portico-signature-256'))).toBe(true);
    expect(header(request!, 'x-portico-signature-256').split(', ')).toHaveLength(1);
  });
});

describe('the retry schedule', () => {
  it('retries a failing receiver on the schedule, the same bytes and event id each time, until it succeeds', async () => {
    const endpoint = await register(server, receiver, ['USER_CREATED']);
    let failures = 0;
    receiver.answer = answerAt(endpoint, () => (failures++ < 2 ? { status: 500, body: 'not now' } : { status: 200 }));
    await createUser();
    const delivered = await settledDelivery(endpoint.id, 'user.created', 'succeeded');
    receiver.answer = () => ({ status: 200 });
    const requests = requestsAt(endpoint.path, 'user.created');
    expect(requests.map((r) => header(r, 'x-portico-delivery-attempt'))).toEqual(['1', '2', '3']);
    expect(new Set(requests.map((r) => r.body)).size).toBe(1);
    expect(new Set(requests.map((r) => header(r, 'x-portico-event-id'))).size).toBe(1);
    expect(delivered.attempts.map((a) => [a.number, a.statusCode, a.error, a.responseBody])).toEqual([
      [1, 500, 'HTTP 500', 'not now'],
      [2, 500, 'HTTP 500', 'not now'],
      [3, 200, null, null],
    ]);
  });

  it('dead-letters after the last attempt; a re-send delivers the same event again, alone or in bulk', async () => {
    const endpoint = await register(server, receiver, ['USER_CREATED']);
    receiver.answer = answerAt(endpoint, () => ({ status: 503 }));
    await createUser();
    await createUser();
    const deadEvents = async () => (await deliveries(endpoint.id, '?status=dead')).filter((d) => d.eventType === 'user.created');
    await eventually(async () => (await deadEvents()).length === 2, 'both deliveries to go dead', 15_000);
    const dead = await deadEvents();
    // One immediate retry and the schedule's three more: five attempts in all.
    expect(dead.map((d) => d.attempts.length)).toEqual([
      TEST_DELIVERY.retryScheduleMs.length + 1,
      TEST_DELIVERY.retryScheduleMs.length + 1,
    ]);
    expect(dead[0]).toMatchObject({ nextAttemptAt: null, finishedAt: match.any(String) });
    const succeeded = async () => (await deliveries(endpoint.id, '?status=succeeded')).filter((d) => d.eventType === 'user.created');
    expect(await succeeded()).toEqual([]);

    receiver.answer = () => ({ status: 200 });
    const one = await rest<Delivery>(server, 'POST', `/webhook-endpoints/${endpoint.id}/deliveries/${dead[0]!.eventId}/attempts`);
    expect([one.status, one.body.status]).toEqual([200, 'pending']);
    await eventually(async () => (await succeeded()).length === 1, 'the re-sent delivery', 10_000);
    const resent = requestsAt(endpoint.path, 'user.created').filter((r) => header(r, 'x-portico-event-id') === dead[0]!.eventId);
    expect(resent.at(-1)!.headers['x-portico-delivery-attempt']).toBe(String(TEST_DELIVERY.retryScheduleMs.length + 2));

    const bulk = await rest<{ queued: number }>(server, 'POST', `/webhook-endpoints/${endpoint.id}/redeliveries`);
    expect(bulk.body).toEqual({ queued: 1, remaining: 0 });
    await eventually(async () => (await succeeded()).length === 2, 'the bulk re-send', 10_000);
    const windowed = await rest<{ queued: number }>(server, 'POST', `/webhook-endpoints/${endpoint.id}/redeliveries`, {
      json: { from: new Date(Date.now() + 60_000).toISOString() },
    });
    expect(windowed.body).toEqual({ queued: 0, remaining: 0 });
    // A window is bounded by instants: a day that does not exist, or a time with no zone (whose
    // instant would be the server's guess), is refused naming the field.
    for (const [from, to] of [
      ['2026-02-30T00:00:00Z', undefined],
      ['2026-11-27T00:00:00', undefined],
      [undefined, '2026-11-27'],
      [undefined, '2026-11-27T25:00:00Z'],
      // A second 60 is a leap second only at the end of a UTC day.
      ['2016-12-31T12:30:60Z', undefined],
    ]) {
      const refused = await rest(server, 'POST', `/webhook-endpoints/${endpoint.id}/redeliveries`, { json: { from, to } });
      const problem = expectProblem(refused, 400, 'invalid-input', `/webhook-endpoints/${endpoint.id}/redeliveries`);
      expect(problem.errors?.map((error) => error.field)).toEqual([from ? 'from' : 'to']);
    }
    // A leap second, which RFC 3339 allows, bounds a window as the last moment of its day.
    const leap = await rest(server, 'POST', `/webhook-endpoints/${endpoint.id}/redeliveries`, {
      json: { from: '2016-12-31T23:59:60Z', to: '2017-01-01T00:00:00Z' },
    });
    expect([leap.status, leap.body]).toEqual([200, { queued: 0, remaining: 0 }]);
    // A window that ends before it starts.
    const reversed = await rest(server, 'POST', `/webhook-endpoints/${endpoint.id}/redeliveries`, {
      json: { from: '2026-11-28T00:00:00Z', to: '2026-11-27T00:00:00Z' },
    });
    expect(expectProblem(reversed, 400, 'invalid-input', `/webhook-endpoints/${endpoint.id}/redeliveries`).errors).toEqual([
      { field: 'to', message: 'must be later than from' },
    ]);
  });
});

describe('what a receiver can do wrong', () => {
  /** Sends one event to a new endpoint whose receiver answers `first` once and 200 after; returns its delivery once settled. */
  async function firstAnswered(first: Answer) {
    const endpoint = await register(server, receiver, ['USER_CREATED']);
    let answered = false;
    receiver.answer = answerAt(endpoint, () => {
      if (answered) return { status: 200 };
      answered = true;
      return first;
    });
    await createUser();
    try {
      return { endpoint, delivery: await settledDelivery(endpoint.id, 'user.created', 'succeeded') };
    } finally {
      receiver.answer = () => ({ status: 200 });
    }
  }

  it.each([
    ['a time-out', { hang: true } as const, /timed out/, null, null],
    ['a reset connection', { reset: true } as const, /ECONNRESET|socket|closed/i, null, null],
    // The status and the start of the body came: they are recorded with what cut the answer short.
    ['a body too slow to finish', { slowBody: true } as const, /^HTTP 200, then timed out$/, 200, 'partial'],
    ['a connection closed mid-body', { cut: true } as const, /^HTTP 200, then .*(socket|closed)/i, 200, 'partial'],
    ['a redirect, not followed', { status: 302, headers: { location: '/elsewhere' } }, /redirect \(not followed\)/, 302, null],
    ['a 500', { status: 500 }, /HTTP 500/, 500, null],
  ])('%s fails the attempt and the next one delivers', async (_name, first, error, statusCode, body) => {
    const { delivery } = await firstAnswered(first);
    expect(delivery.attempts.map((a) => a.number)).toEqual([1, 2]);
    expect(delivery.attempts[0]!.error).toMatch(error);
    expect([delivery.attempts[0]!.statusCode, delivery.attempts[0]!.responseBody]).toEqual([statusCode, body]);
    expect(receiver.received.some((r) => r.path === '/elsewhere')).toBe(false);
  });

  it('a response body past the read limit: its first KiB is recorded, and the next attempt delivers', async () => {
    const { delivery } = await firstAnswered({ status: 500, body: `${'a'.repeat(1024)}${'b'.repeat(200_000)}` });
    expect(delivery.attempts[0]).toMatchObject({ statusCode: 500, responseBody: 'a'.repeat(1024) });
    expect(delivery.attempts.map((a) => a.number)).toEqual([1, 2]);
  });

  it('a response body with NUL bytes is recorded without them', async () => {
    const { delivery } = await firstAnswered({ status: 500, body: 'bad\u0000news' });
    expect(delivery.attempts[0]).toMatchObject({ statusCode: 500, responseBody: 'badnews' });
  });

  it('a 429 with Retry-After defers the next attempt at least that long', async () => {
    const endpoint = await register(server, receiver, ['USER_CREATED']);
    receiver.answer = answerAt(endpoint, () => ({ status: 429, headers: { 'retry-after': '30' } }));
    await createUser();
    const waiting = await settledDelivery(endpoint.id, 'user.created', 'failed');
    receiver.answer = () => ({ status: 200 });
    expect(Date.parse(waiting.nextAttemptAt!) - Date.parse(waiting.attempts[0]!.startedAt)).toBeGreaterThanOrEqual(30_000);
    expect(requestsAt(endpoint.path, 'user.created')).toHaveLength(1);
  });

  it('410 Gone disables the endpoint, visibly, until it is enabled again', async () => {
    const endpoint = await register(server, receiver, ['USER_CREATED']);
    receiver.answer = answerAt(endpoint, () => ({ status: 410 }));
    await createUser();
    const dead = await settledDelivery(endpoint.id, 'user.created', 'dead');
    receiver.answer = () => ({ status: 200 });
    expect(dead.attempts).toHaveLength(1);
    const read = await rest<{ enabled: boolean; disabledReason: string }>(server, 'GET', `/webhook-endpoints/${endpoint.id}`);
    expect(read.body).toMatchObject({ enabled: false, disabledReason: match.stringContaining('410 Gone') });
    const enabled = await rest(server, 'PATCH', `/webhook-endpoints/${endpoint.id}`, {
      json: { enabled: true },
      contentType: 'application/merge-patch+json',
    });
    expect(enabled.body).toMatchObject({ enabled: true, disabledReason: null });
  });

  it('a delivery waiting for an endpoint that a 410 disabled shows no attempt due until it is enabled again', async () => {
    const endpoint = await register(server, receiver, ['USER_CREATED']);
    // The first event's attempt is deferred an hour; the second's answers 410.
    let answered = 0;
    receiver.answer = answerAt(endpoint, () => (answered++ === 0 ? { status: 429, headers: { 'retry-after': '3600' } } : { status: 410 }));
    await createUser();
    const waiting = await settledDelivery(endpoint.id, 'user.created', 'failed');
    expect(waiting.nextAttemptAt).not.toBeNull();
    await createUser();
    await eventually(async () => (await deliveries(endpoint.id, '?status=dead')).length === 1, 'the second delivery is dead', 15_000);
    receiver.answer = () => ({ status: 200 });
    const held = (await deliveries(endpoint.id, '?status=failed')).find((d) => d.eventId === waiting.eventId);
    // Its due time would soon read as an overdue retry, where nothing is scheduled while the endpoint is disabled.
    expect([held?.status, held?.nextAttemptAt]).toEqual(['failed', null]);
    await rest(server, 'PATCH', `/webhook-endpoints/${endpoint.id}`, {
      json: { enabled: true },
      contentType: 'application/merge-patch+json',
    });
    const again = (await deliveries(endpoint.id, '?status=failed')).find((d) => d.eventId === waiting.eventId);
    expect(again?.nextAttemptAt).toBe(waiting.nextAttemptAt);
    // Its retry is an hour away: the endpoint goes, and its place under the key's limit with it.
    expect((await rest(server, 'DELETE', `/webhook-endpoints/${endpoint.id}`)).status).toBe(204);
  });

  it('an endpoint whose URL points inside the network is refused again at delivery time', async () => {
    const endpoint = await register(server, receiver, ['USER_CREATED']);
    // As if the URL had passed registration (say, under other rules) and pointed inside since.
    await server.orm.em.fork().execute(`update webhook_endpoints set url = 'http://10.0.0.1/hooks' where id = ?`, [endpoint.id]);
    await createUser();
    // Refused at every attempt, it ends in the dead-letter queue (the test schedule's waits are
    // milliseconds, too short to be sure of seeing it still waiting).
    const waiting = await settledDelivery(endpoint.id, 'user.created', 'dead');
    expect(waiting.attempts[0]!.error).toBe('refused: the URL must not point at 10.0.0.1, a private address');
    expect(waiting.attempts[0]!.statusCode).toBeNull();
  });

  it('an endpoint deleted while an attempt to it is under way holds up nothing else', async () => {
    const doomed = await register(server, receiver, ['USER_CREATED']);
    const other = await register(server, receiver, ['USER_CREATED']);
    receiver.answer = answerAt(doomed, () => ({ hang: true }));
    await createUser();
    await eventually(() => requestsAt(doomed.path, 'user.created').length > 0, 'the attempt to start', 10_000);
    expect((await rest(server, 'DELETE', `/webhook-endpoints/${doomed.id}`)).status).toBe(204);
    // The hanging attempt times out with nothing left to record it against…
    await eventually(() => requestsAt(doomed.path, 'user.created')[0]!.closedAt !== undefined, 'the attempt to time out', 10_000);
    // …and the other endpoint's next delivery is recorded all the same.
    await createUser();
    await eventually(
      async () => (await deliveries(other.id, '?status=succeeded')).filter((d) => d.eventType === 'user.created').length === 2,
      'the other endpoint to get both events',
      15_000,
    );
    receiver.answer = () => ({ status: 200 });
  });

  it(`keeps a delivery's latest ${ATTEMPTS_KEPT} attempts, however often it is re-sent: the list and the table stay bounded`, async () => {
    const endpoint = await register(server, receiver, ['USER_CREATED']);
    receiver.answer = answerAt(endpoint, () => ({ status: 500 }));
    await createUser();
    const series = TEST_DELIVERY.retryScheduleMs.length + 1;
    let dead = await settledDelivery(endpoint.id, 'user.created', 'dead');
    // Each re-send runs the schedule again: five more attempts, until past the bound.
    for (let resends = 1; resends * series <= ATTEMPTS_KEPT; resends++) {
      expect((await rest(server, 'POST', `/webhook-endpoints/${endpoint.id}/deliveries/${dead.eventId}/attempts`)).status).toBe(200);
      const total = (resends + 1) * series;
      await eventually(
        async () => {
          dead = (await deliveries(endpoint.id, '?status=dead')).find((d) => d.eventId === dead.eventId) ?? dead;
          return dead.attempts.at(-1)?.number === total;
        },
        `attempt ${total} recorded`,
        15_000,
      );
    }
    const last = dead.attempts.at(-1)!.number;
    expect(last).toBeGreaterThan(ATTEMPTS_KEPT);
    expect(dead.attempts.map((attempt) => attempt.number)).toEqual(
      Array.from({ length: ATTEMPTS_KEPT }, (_, i) => last - ATTEMPTS_KEPT + 1 + i),
    );
    const [row] = await server.orm.em
      .fork()
      .execute<{ n: number }[]>('select count(*)::int as n from webhook_attempts where event_id = ? and endpoint_id = ?', [
        dead.eventId,
        endpoint.id,
      ]);
    expect(row!.n).toBe(ATTEMPTS_KEPT);
    receiver.answer = () => ({ status: 200 });
  });

  it(`re-sends dead deliveries ${RESEND_BATCH} at a time, oldest first, saying how many remain`, async () => {
    const endpoint = await register(server, receiver, ['USER_CREATED']);
    // Disabled, so that what is queued again stays queued (a disabled endpoint's deliveries wait).
    await rest(server, 'PATCH', `/webhook-endpoints/${endpoint.id}`, {
      json: { enabled: false },
      contentType: 'application/merge-patch+json',
    });
    const dead = RESEND_BATCH + 5;
    await server.orm.em.fork().execute(
      `with made as (
         insert into events (id, type, created_at, data)
         select ? || lpad(n::text, 6, '0'), 'user.created', now(), '{"object":{}}'::jsonb from generate_series(1, ?) n
         returning id)
       insert into webhook_deliveries (event_id, endpoint_id, state, finished_at) select id, ?, 'dead', now() from made`,
      [`evt_batch${endpoint.id.slice(-6)}`, dead, endpoint.id],
    );
    const resend = () => rest<{ queued: number; remaining: number }>(server, 'POST', `/webhook-endpoints/${endpoint.id}/redeliveries`);
    expect((await resend()).body).toEqual({ queued: RESEND_BATCH, remaining: 5 });
    const [oldest] = await server.orm.em
      .fork()
      .execute<{ state: string }[]>(
        `select state from webhook_deliveries where endpoint_id = ? and event_id like 'evt_batch%' order by event_id limit 1`,
        [endpoint.id],
      );
    expect(oldest!.state).toBe('pending');
    expect((await resend()).body).toEqual({ queued: 5, remaining: 0 });
    expect((await resend()).body).toEqual({ queued: 0, remaining: 0 });
    expect((await rest(server, 'DELETE', `/webhook-endpoints/${endpoint.id}`)).status).toBe(204);
  });

  it('a re-send while an attempt is under way is refused with 409', async () => {
    const endpoint = await register(server, receiver, ['USER_CREATED']);
    receiver.answer = answerAt(endpoint, () => ({ hang: true }));
    await createUser();
    await eventually(() => requestsAt(endpoint.path, 'user.created').length > 0, 'the attempt to start', 10_000);
    const eventId = header(requestsAt(endpoint.path, 'user.created')[0]!, 'x-portico-event-id');
    const refused = await rest(server, 'POST', `/webhook-endpoints/${endpoint.id}/deliveries/${eventId}/attempts`);
    receiver.answer = () => ({ status: 200 });
    expectProblem(refused, 409, 'conflict', `/webhook-endpoints/${endpoint.id}/deliveries/${eventId}/attempts`);
    await settledDelivery(endpoint.id, 'user.created', 'succeeded');
  });
});

/**
 * Runs `work` on a database, a receiver and a data folder of its own (for tests whose workers or
 * processes must not meet the suite's), and cleans all three up.
 */
async function apart(work: (isolated: TestServer, own: Receiver, dataDir: string) => Promise<void>): Promise<void> {
  const isolated = await startTestServer(localWebhooks());
  const own = await startReceiver();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'portico-webhooks-'));
  try {
    await work(isolated, own, dataDir);
  } finally {
    await own.close();
    await isolated.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

interface BehindProxy {
  isolated: TestServer;
  own: Receiver;
  proxy: TcpProxy;
  faulty: TestWorker;
  /** An endpoint subscribed to user.created, whose ping has arrived. */
  endpoint: Endpoint & { path: string };
}

/** Runs `work` apart, with a worker that reaches PostgreSQL through a proxy the test can break. */
function withWorkerBehindProxy(work: (rig: BehindProxy) => Promise<void>): Promise<void> {
  return apart(async (isolated, own) => {
    const database = new URL(isolated.databaseUrl);
    const proxy = await startTcpProxy({ host: database.hostname, port: Number(database.port || 5432) });
    const faulty = await startTestWorker(isolated, {}, { databaseUrl: proxy.proxiedUrl(isolated.databaseUrl) });
    try {
      const endpoint = await register(isolated, own, ['USER_CREATED']);
      await eventually(() => requestsAt(endpoint.path, 'ping', own).length === 1, 'the ping', 10_000);
      // And its outcome recorded: a fault that met that statement would stop the worker recording,
      // not claiming, which is another test's.
      await settledDelivery(endpoint.id, 'ping', 'succeeded', isolated);
      await work({ isolated, own, proxy, faulty, endpoint });
    } finally {
      await faulty.stop();
      await proxy.close();
    }
  });
}

/** What the worker logged about `topic`, in order. */
const toldAbout = (worker: TestWorker, topic: string) =>
  worker.logs.map((line) => line.msg).filter((msg) => typeof msg === 'string' && msg.includes(topic));

describe.each<[string, Fault]>([
  ['refuses connections', 'refuse'],
  ['resets connections', 'reset'],
  ['drops packets', 'blackhole'],
])('PostgreSQL that %s', (_name, fault) => {
  it('stops the worker only while it lasts: once it is over, the worker delivers on its own', () =>
    withWorkerBehindProxy(async ({ isolated, own, proxy, faulty, endpoint }) => {
      await proxy.set(fault);
      await createUser(isolated);
      // The worker meets the fault (its claims fail, bounded by the connection and statement time-outs)…
      await eventually(
        () => faulty.logs.some((line) => line.msg === 'could not claim webhook deliveries; trying again'),
        'the worker to meet the fault',
        15_000,
      );
      expect(requestsAt(endpoint.path, 'user.created', own)).toEqual([]);
      await proxy.set('pass');
      // …and once the database is back, the event arrives without anyone's help.
      await settledDelivery(endpoint.id, 'user.created', 'succeeded', isolated);
      expect(requestsAt(endpoint.path, 'user.created', own)).toHaveLength(1);
      // The outage is logged once as it begins and once as it ends, not at every poll.
      expect(toldAbout(faulty, 'claim')).toEqual(['could not claim webhook deliveries; trying again', 'claiming webhook deliveries again']);
    }));
});

// Held packets arrive late: a claim the worker sent as the outage began, and gave up on, then runs
// and takes the delivery again, with no attempt behind it; the recorded success must still end it.
describe.each<[string, Fault]>([
  ['drops packets', 'blackhole'],
  ['holds packets and delivers them late', 'stall'],
])('an outcome that cannot be recorded at once, on a network that %s', (_name, fault) => {
  it('is recorded before the worker claims again: a delivery whose lease lapsed in an outage is not sent twice', () =>
    withWorkerBehindProxy(async ({ isolated, own, proxy, faulty, endpoint }) => {
      let answer!: () => void;
      own.answer = () => ({ until: new Promise<void>((resolve) => (answer = resolve)), status: 200 });
      await createUser(isolated);
      await eventually(() => requestsAt(endpoint.path, 'user.created', own).length === 1, 'the attempt', 10_000);
      // The receiver takes the event while the worker's database is out of reach: its outcome waits.
      // Packets held are delivered in the order they were sent, so first the worker sends a claim into
      // the outage (it polls while the attempt is under way), as a worker does whose attempts take a while.
      await proxy.set(fault);
      if (fault === 'stall') await eventually(() => proxy.held > 0, 'a claim to be sent into the outage', 5_000);
      answer();
      await eventually(
        () => faulty.logs.some((line) => line.msg === 'could not record webhook attempts; trying again'),
        'the worker to fail to record it',
        15_000,
      );
      // The claim's lease lapses meanwhile: the delivery is due again, as far as the table says.
      const lapsed = async () =>
        (
          await isolated.orm.em
            .fork()
            .execute<{ lapsed: boolean }[]>(
              `select coalesce(bool_and(locked_until <= now()), false) as lapsed from webhook_deliveries where endpoint_id = ? and state = 'pending'`,
              [endpoint.id],
            )
        )[0]!.lapsed;
      await eventually(lapsed, 'the lease to lapse', 15_000);
      await proxy.set('pass');
      await settledDelivery(endpoint.id, 'user.created', 'succeeded', isolated);
      expect(requestsAt(endpoint.path, 'user.created', own)).toHaveLength(1);
      const [delivery] = await isolated.orm.em
        .fork()
        .execute<{ locked: boolean }[]>(
          `select locked_until is not null as locked from webhook_deliveries where endpoint_id = ? and state = 'succeeded'`,
          [endpoint.id],
        );
      expect(delivery).toEqual({ locked: false });
      // Logged once as it begins and once as it ends, however many times the worker tried. (Held
      // packets may record the outcome before the worker's own next try, which then ends the outage.)
      await eventually(() => toldAbout(faulty, 'record').length === 2, 'the end of the outage to be logged', 10_000);
      expect(toldAbout(faulty, 'record')).toEqual(['could not record webhook attempts; trying again', 'recording webhook attempts again']);
    }));
});

describe('a stop while outcomes cannot be recorded', () => {
  it('tries once more to record them, not once per attempt that ended, and ends', () =>
    apart(async (isolated, own) => {
      const database = new URL(isolated.databaseUrl);
      const proxy = await startTcpProxy({ host: database.hostname, port: Number(database.port || 5432) });
      const many = 32;
      const faulty = await startTestWorker(
        isolated,
        // Time-outs long enough for every attempt to be under way before the first ends.
        { concurrency: many, endpointConcurrency: many, timeoutMs: 4000 },
        { databaseUrl: proxy.proxiedUrl(isolated.databaseUrl) },
      );
      let answer!: () => void;
      const never = new Promise<void>((resolve) => (answer = resolve));
      try {
        const endpoint = await register(isolated, own, ['USER_CREATED']);
        await eventually(() => requestsAt(endpoint.path, 'ping', own).length === 1, 'the ping', 10_000);
        // Every attempt waits for an answer until its time-out, by which time the database is silent.
        own.answer = answerAt(endpoint, () => ({ until: never, status: 200 }));
        for (let i = 0; i < many; i++) await createUser(isolated);
        await eventually(() => requestsAt(endpoint.path, 'user.created', own).length >= many, 'every attempt to be under way', 15_000);
        await proxy.set('blackhole');
        await eventually(
          () => faulty.logs.some((line) => line.msg === 'could not record webhook attempts; trying again'),
          'the worker to fail to record them',
          15_000,
        );
        // Each try waits out the database's bounds: one per attempt that ended made the stop wait
        // minutes (32 tries here, of a second or two each, past this test's time-out).
        await faulty.stop();
        const unrecorded = faulty.logs.filter((line) => String(line.msg).startsWith('stopping with webhook attempts unrecorded'));
        expect(unrecorded).toHaveLength(1);
        expect(unrecorded[0]!.outcomes).toBeGreaterThan(0);
      } finally {
        answer();
        await faulty.stop();
        await proxy.close();
      }
    }));
});

// Each test starts the service as a process, which on two busy cores can take seconds.
describe('running it', { timeout: 60_000 }, () => {
  /** The service process spoken to directly, with the suite's key (the two share the database). */
  const direct = (service: ServiceProcess, isolated: TestServer): Client => ({
    fetch: (route, init = {}) =>
      fetch(`${service.url}${route}`, {
        ...init,
        headers: { 'x-api-key': isolated.apiKey, ...(init.headers as Record<string, string>) },
      }),
  });

  it('the service started as `npm start` does (API and worker in one process) delivers webhooks', () =>
    apart(async (isolated, own, dataDir) => {
      const service = await startServiceProcess(isolated.databaseUrl, dataDir, '', {
        role: 'all',
        env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' },
      });
      try {
        const endpoint = await register(direct(service, isolated), own, ['USER_CREATED']);
        await createUser(direct(service, isolated));
        await eventually(() => requestsAt(endpoint.path, 'user.created', own).length === 1, 'the delivery', 10_000);
      } finally {
        service.stop();
        expect(await service.exited).toBe(0);
      }
    }));

  it('stops taking requests at once on SIGTERM while a webhook attempt is under way, and lets the attempt finish', () =>
    apart(async (isolated, own, dataDir) => {
      let release = () => {};
      const released = new Promise<void>((resolve) => (release = resolve));
      own.answer = (request) =>
        header(request, 'x-portico-event-type') === 'user.created' ? { until: released, status: 200 } : { status: 200 };
      // Attempts may take far longer than the test waits for the API to stop.
      const service = await startServiceProcess(isolated.databaseUrl, dataDir, '', {
        role: 'all',
        env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_TIMEOUT_MS: '120000' },
      });
      const endpoint = await register(direct(service, isolated), own, ['USER_CREATED']);
      await createUser(direct(service, isolated));
      await eventually(() => requestsAt(endpoint.path, 'user.created', own).length === 1, 'the attempt to start', 10_000);
      service.stop();
      const ready = () =>
        fetch(`${service.url}/ready`).then(
          (response) => response.status,
          () => 'refused',
        );
      await eventually(async () => (await ready()) !== 200, 'the API to stop serving while the attempt waits', 10_000);
      release();
      expect(await service.exited).toBe(0);
      // The attempt the stopping worker waited for was recorded.
      await settledDelivery(endpoint.id, 'user.created', 'succeeded', isolated);
      expect(requestsAt(endpoint.path, 'user.created', own)).toHaveLength(1);
    }));
});

describe('failures of the worker and the database', () => {
  it('a worker killed mid-delivery loses nothing: after its lease another worker delivers', () =>
    apart(async (isolated, own, dataDir) => {
      own.answer = () => ({ hang: true });
      const endpoint = await register(isolated, own, ['USER_CREATED']);
      const doomed = await startServiceProcess(isolated.databaseUrl, dataDir, '', {
        role: 'worker',
        env: { WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_POLL_MS: '50' },
      });
      await createUser(isolated);
      await eventually(() => requestsAt(endpoint.path, 'user.created', own).length > 0, 'the worker to start delivering', 10_000);
      doomed.stop('SIGKILL');
      expect(await doomed.exited).toBe('SIGKILL');
      own.answer = () => ({ status: 200 });
      const rescuer = await startTestWorker(isolated, { timeoutMs: 1000 });
      try {
        const delivered = await settledDelivery(endpoint.id, 'user.created', 'succeeded', isolated);
        // The killed worker's attempt was never recorded; the event arrived, with the same id, all the same.
        expect(delivered.attempts.at(-1)).toMatchObject({ statusCode: 200 });
        expect(new Set(requestsAt(endpoint.path, 'user.created', own).map((r) => header(r, 'x-portico-event-id'))).size).toBe(1);
      } finally {
        await rescuer.stop();
      }
    }));

  it('recovers on its own when PostgreSQL drops every connection', async () => {
    const endpoint = await register(server, receiver, ['USER_CREATED']);
    await server.orm.em
      .fork()
      .execute(`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`);
    await eventually(async () => (await rest(server, 'GET', '/events?limit=1')).status === 200, 'the service to reconnect', 15_000);
    await createUser();
    await settledDelivery(endpoint.id, 'user.created', 'succeeded');
  });

  it('a receiver that never answers holds its own places only: the other endpoints get their events meanwhile', () =>
    apart(async (isolated, own) => {
      // Attempts wait far longer than the test does, so the silent receiver's stay under way throughout.
      const worker = await startTestWorker(isolated, { concurrency: 4, endpointConcurrency: 2, timeoutMs: 60_000 });
      try {
        const silent = await register(isolated, own, ['USER_CREATED']);
        const healthy = await register(isolated, own, ['USER_CREATED']);
        own.answer = answerAt(silent, () => ({ hang: true }));
        for (let i = 0; i < 10; i++) await createUser(isolated);
        await eventually(
          () => requestsAt(healthy.path, 'user.created', own).length === 10,
          'every event to reach the answering endpoint',
          15_000,
        );
        const hanging = requestsAt(silent.path, 'user.created', own);
        expect(hanging).toHaveLength(2);
        expect(hanging.every((request) => request.closedAt === undefined)).toBe(true);
      } finally {
        // The receiver closes first (apart), ending the hanging attempts, then the worker stops.
        await own.close();
        await worker.stop();
      }
    }));

  it('receivers of one API key that never answer hold that key’s places only: another key’s endpoints get their events meanwhile', () =>
    apart(async (isolated, own) => {
      // Each silent endpoint could hold 2 places, and the two all 4; their key holds at most 2.
      const worker = await startTestWorker(isolated, { concurrency: 4, endpointConcurrency: 2, ownerConcurrency: 2, timeoutMs: 60_000 });
      try {
        const silent = [await register(isolated, own, ['USER_CREATED']), await register(isolated, own, ['USER_CREATED'])];
        const otherKey = await isolated.createKey({ name: 'Another tenant', scopes: ['webhooks:manage'] });
        const created = await rest<Endpoint>(isolated, 'POST', '/webhook-endpoints', {
          json: { url: `${own.url}/hooks/other-tenant`, events: ['USER_CREATED'] },
          headers: { 'x-api-key': otherKey },
        });
        expect(created.status).toBe(201);
        usedCredential(created.body.secret);
        own.answer = (request) =>
          silent.some((endpoint) => request.path === endpoint.path) && header(request, 'x-portico-event-type') !== 'ping'
            ? { hang: true }
            : { status: 200 };
        for (let i = 0; i < 10; i++) await createUser(isolated);
        await eventually(
          () => requestsAt('/hooks/other-tenant', 'user.created', own).length === 10,
          'every event to reach the other key’s endpoint',
          15_000,
        );
        const hanging = silent.flatMap((endpoint) => requestsAt(endpoint.path, 'user.created', own));
        expect(hanging).toHaveLength(2);
        expect(hanging.every((request) => request.closedAt === undefined)).toBe(true);
      } finally {
        await own.close();
        await worker.stop();
      }
    }));

  it('two workers share one queue: every delivery made, none attempted twice at once', { timeout: 120_000 }, () =>
    apart(async (isolated, own) => {
      // A claim lasts the attempt's time-out and as long again (at least 1 s) for its outcome to be
      // recorded; with the tests' 1 s time-out, a database slow to commit under this load (seen on a
      // PostgreSQL with fsync on a slow disk) recorded some successes after their claim had lapsed, and
      // the other worker sent them again. The production default (10 s) leaves 10 s; 5 s here.
      const lease = { timeoutMs: 5000 };
      const workers = [await startTestWorker(isolated, lease), await startTestWorker(isolated, lease)];
      try {
        const endpoints: Endpoint[] = [];
        for (let i = 0; i < 4; i++) endpoints.push(await register(isolated, own, ['ORDER_CREATED']));
        const user = await createUser(isolated);
        // 4 endpoints × 500 orders: 2,000 deliveries (8,000 in the long mode).
        const orders = runs(500, 2000);
        for (let sent = 0; sent < orders; sent += 25) {
          await Promise.all(Array.from({ length: 25 }, () => rest(isolated, 'POST', `/users/${user.id}/orders`, { json: { total: 1 } })));
        }
        const expected = orders * endpoints.length;
        await eventually(
          async () => {
            const [row] = await isolated.orm.em.fork().execute<{ n: number }[]>(
              `select count(*)::int as n from webhook_deliveries d join events e on e.id = d.event_id
               where d.state = 'succeeded' and e.type = 'order.created' and d.endpoint_id in (?)`,
              [endpoints.map((e) => e.id)],
            );
            return row!.n === expected;
          },
          `all ${expected} deliveries to succeed`,
          60_000,
        );
        const orderRequests = own.received.filter((r) => header(r, 'x-portico-event-type') === 'order.created');
        const distinct = new Set(orderRequests.map((r) => `${r.path} ${header(r, 'x-portico-event-id')}`));
        expect(distinct.size).toBe(expected);
        // At least once: a delivery is sent again only after an attempt of it failed (an answer later
        // than the worker waits, on a loaded machine), and none succeeds twice.
        const [attempts] = await isolated.orm.em.fork().execute<{ succeeded: number; failed: number }[]>(
          `select count(*) filter (where status_code between 200 and 299)::int as succeeded,
                  count(*) filter (where status_code is null or status_code not between 200 and 299)::int as failed
           from webhook_attempts a join events e on e.id = a.event_id
           where e.type = 'order.created' and a.endpoint_id in (?)`,
          [endpoints.map((e) => e.id)],
        );
        expect(attempts!.succeeded).toBe(expected);
        expect(orderRequests.length - expected).toBeLessThanOrEqual(attempts!.failed);
        expect(own.overlaps).toEqual([]);
      } finally {
        for (const running of workers) await running.stop();
      }
    }),
  );
});
