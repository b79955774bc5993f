// The delivery queue in PostgreSQL: workers claim due deliveries in batches (FOR UPDATE SKIP LOCKED,
// with a lease, so a crashed worker's claims go to another once the lease lapses and no delivery is
// attempted by two workers at once) and settle their outcomes in batches, each attempt recorded.
import { violatedConstraint } from '../db/failures.ts';
import { epochMsOf } from '../db/records.ts';
import { statement, type Sql } from '../db/sql.ts';
import type { DeliveryState } from '../db/entities/index.ts';
import type { OutboxFigures } from '../telemetry/metrics.ts';

/** A claimed delivery, with what sending it needs. */
export interface ClaimedDelivery {
  eventId: string;
  endpointId: string;
  /** The API key that registered the endpoint. */
  ownerKeyId: string;
  /** The attempt about to be made: within the series (for the schedule) and overall (its number). */
  attempt: number;
  number: number;
  type: string;
  createdAt: number;
  data: { object: Record<string, unknown> };
  /** The writing request's trace, when tracing was on. */
  traceparent: string | null;
  url: string;
  /** Sealed signing secrets: the current one, and the previous one while its overlap lasts. */
  secret: string;
  previousSecret: string | null;
}

// Due deliveries are taken endpoint by endpoint, each endpoint's earliest first, and only as many as
// keep it within `$3` attempts under way in this worker, and its owner (the API key that registered
// it) within `$6` over all its endpoints (`$4`/`$5` and `$7`/`$8`: the endpoints and the owners it has
// attempts under way to, and how many); then the earliest of all of those. One receiver that hangs,
// with thousands due, holds `$3` of a worker's places and delays no other endpoint; one key's many
// receivers that hang hold `$6`, and delay no other key's. The worker counts its own attempts because
// a count kept in the table would need an index on the lease, and every claim would then rewrite
// index entries (claims are HOT updates: deliveries.test.ts). A delivery is locked as it is read
// (skipped if another worker holds it); those read but not taken are released when the statement ends.
const CLAIM = statement(
  'deliveries_claim',
  `with busy as (
     select * from unnest($4::text[], $5::int[]) as b(endpoint_id, n)),
   owners_busy as (
     select * from unnest($7::text[], $8::int[]) as o(owner_key_id, n)),
   candidates as (
     select x.event_id, x.endpoint_id, e.owner_key_id, x.next_attempt_at, coalesce(ob.n, 0) as owner_busy,
       coalesce(busy.n, 0) + row_number() over (partition by x.endpoint_id order by x.next_attempt_at) as place
     from webhook_endpoints e
     left join busy on busy.endpoint_id = e.id
     left join owners_busy ob on ob.owner_key_id = e.owner_key_id
     cross join lateral (
       select d.event_id, d.endpoint_id, d.next_attempt_at from webhook_deliveries d
       where d.endpoint_id = e.id and d.state in ('pending', 'failed') and d.next_attempt_at <= now()
         and (d.locked_until is null or d.locked_until <= now())
       order by d.next_attempt_at limit $3
       for update of d skip locked) x
     where e.enabled and coalesce(busy.n, 0) < $3 and coalesce(ob.n, 0) < $6),
   owned as (
     select event_id, endpoint_id, next_attempt_at,
       owner_busy + row_number() over (partition by owner_key_id order by next_attempt_at) as owner_place
     from candidates where place <= $3),
   due as (
     select event_id, endpoint_id from owned where owner_place <= $6 order by next_attempt_at limit $1),
   claimed as (
     update webhook_deliveries d set locked_until = now() + $2 * interval '1 millisecond',
       attempts = d.attempts + 1, attempts_total = d.attempts_total + 1
     from due where d.event_id = due.event_id and d.endpoint_id = due.endpoint_id
     returning d.event_id, d.endpoint_id, d.attempts, d.attempts_total)
   select c.event_id as "eventId", c.endpoint_id as "endpointId", e.owner_key_id as "ownerKeyId", c.attempts as attempt,
     c.attempts_total as number, ev.type, ${epochMsOf('ev.created_at')} as "createdAt", ev.data, ev.traceparent, e.url, e.secret,
     case when e.previous_secret_expires_at > now() then e.previous_secret end as "previousSecret"
   from claimed c join events ev on ev.id = c.event_id join webhook_endpoints e on e.id = c.endpoint_id`,
);

/** How many attempts a worker may have under way to one endpoint and to one owner's, and how many it has. */
export interface EndpointPlaces {
  perEndpoint: number;
  busy: ReadonlyMap<string, number>;
  perOwner: number;
  busyOwners: ReadonlyMap<string, number>;
}

/** Claims up to `limit` due deliveries of enabled endpoints for `leaseMs`, within `places`. */
export async function claimDeliveries(sql: Sql, limit: number, leaseMs: number, places: EndpointPlaces): Promise<ClaimedDelivery[]> {
  return sql.rows<ClaimedDelivery>(CLAIM, [
    limit,
    leaseMs,
    places.perEndpoint,
    [...places.busy.keys()],
    [...places.busy.values()],
    places.perOwner,
    [...places.busyOwners.keys()],
    [...places.busyOwners.values()],
  ]);
}

/** What became of one attempt. */
export interface Settled {
  eventId: string;
  endpointId: string;
  number: number;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  responseBody: string | null;
  signature: string;
  /** `succeeded`, `failed` (with `nextAttemptAt`) or `dead`. */
  state: Exclude<DeliveryState, 'pending'>;
  nextAttemptAt: Date | null;
}

/**
 * Attempts kept per delivery: the latest, older ones deleted as each is recorded. Re-sends add
 * attempts without end (a re-send is one request), and every listing of deliveries reads them all.
 */
export const ATTEMPTS_KEPT = 20;

const SETTLE = statement(
  'deliveries_settle',
  `with outcome as (
     select * from unnest($1::text[], $2::text[], $3::int[], $4::timestamptz[], $5::int[], $6::int[], $7::text[], $8::text[], $9::text[], $10::text[], $11::timestamptz[])
       as o(event_id, endpoint_id, number, started_at, duration_ms, status_code, error, response_body, signature, state, next_attempt_at)),
   recorded as (
     insert into webhook_attempts (event_id, endpoint_id, number, started_at, duration_ms, status_code, error, response_body, signature)
     select o.event_id, o.endpoint_id, o.number, o.started_at, o.duration_ms, o.status_code, o.error, o.response_body, o.signature
     from outcome o
     -- A delivery deleted meanwhile (its endpoint was) has nothing to record the attempt against.
     where exists (select 1 from webhook_deliveries d where d.event_id = o.event_id and d.endpoint_id = o.endpoint_id)
     on conflict do nothing),
   pruned as (
     delete from webhook_attempts a using outcome o
     where o.number > ${ATTEMPTS_KEPT} and a.event_id = o.event_id and a.endpoint_id = o.endpoint_id
       and a.number <= o.number - ${ATTEMPTS_KEPT})
   update webhook_deliveries d set state = o.state, locked_until = null,
     next_attempt_at = coalesce(o.next_attempt_at, d.next_attempt_at),
     finished_at = case when o.state in ('succeeded', 'dead') then now() end
   from outcome o where d.event_id = o.event_id and d.endpoint_id = o.endpoint_id
     and (o.state = 'succeeded' or (d.attempts_total = o.number and d.state <> 'succeeded'))`,
);

/**
 * Records the attempts and moves each delivery on, in one statement. A failed attempt of a delivery
 * re-sent or claimed again meanwhile (its attempt number moved on) leaves it in its new state, and
 * never undoes a success; the attempt is recorded all the same. A success ends the delivery whatever
 * happened meanwhile: the receiver has the event. (A claim may have taken it with no attempt behind
 * it: one the worker gave up waiting for, which PostgreSQL ran when the network delivered it late;
 * the delivery would otherwise be sent again once that claim's lease lapsed.) One deleted meanwhile
 * is skipped; should its deletion commit while the statement runs (a foreign key violation), each
 * outcome is settled on its own and the deleted one dropped.
 */
export async function settleDeliveries(sql: Sql, settled: readonly Settled[]): Promise<void> {
  try {
    await settleBatch(sql, settled);
  } catch (error) {
    if (violatedConstraint(error) !== ATTEMPTS_FOREIGN_KEY || settled.length === 0) throw error;
    for (const one of settled) {
      await settleBatch(sql, [one]).catch((failure: unknown) => {
        if (violatedConstraint(failure) !== ATTEMPTS_FOREIGN_KEY) throw failure;
      });
    }
  }
}

const ATTEMPTS_FOREIGN_KEY = 'webhook_attempts_event_id_endpoint_id_foreign';

async function settleBatch(sql: Sql, settled: readonly Settled[]): Promise<void> {
  const column = <K extends keyof Settled>(key: K) => settled.map((s) => s[key]);
  await sql.rows(SETTLE, [
    column('eventId'),
    column('endpointId'),
    column('number'),
    column('startedAt'),
    column('durationMs'),
    column('statusCode'),
    column('error'),
    column('responseBody'),
    column('signature'),
    column('state'),
    column('nextAttemptAt'),
  ]);
}

const DISABLE = statement(
  'endpoints_disable_gone',
  `update webhook_endpoints set enabled = false, disabled_reason = $2, updated_at = now() where id = $1 and enabled`,
);

/** Disables an endpoint whose receiver answered 410 Gone; it stays so until it is enabled again. */
export async function disableGoneEndpoint(sql: Sql, endpointId: string, at: Date): Promise<void> {
  await sql.rows(DISABLE, [endpointId, `The receiver answered 410 Gone at ${at.toISOString()}; enable the endpoint again to resume.`]);
}

/**
 * What the outbox holds, for the metrics: deliveries waiting (a first attempt or a retry) at enabled
 * endpoints, the age of the oldest of them, and the dead-letter queue; each count walks its partial
 * index. Those of a disabled endpoint wait for its owner, not for the worker: counted, one endpoint
 * disabled (or gone, 410) kept the oldest age rising for ever, and a backlog alert on it firing.
 */
const OUTBOX_FIGURES = statement(
  'outbox_figures',
  `with waiting as (
     select d.created_at from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id and e.enabled
     where d.state in ('pending', 'failed'))
   select (select count(*) from waiting)::float8 as pending,
          coalesce(extract(epoch from now() - (select min(created_at) from waiting)), 0)::float8 as "oldestPendingAgeSeconds",
          (select count(*) from webhook_deliveries where state = 'dead')::float8 as dead`,
);

export async function outboxFigures(sql: Sql): Promise<OutboxFigures> {
  const [figures] = await sql.rows<OutboxFigures>(OUTBOX_FIGURES, []);
  return figures ?? { pending: 0, oldestPendingAgeSeconds: 0, dead: 0 };
}
