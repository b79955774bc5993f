// Deliveries of an endpoint: listing them with their attempts (the dead-letter queue is the `dead`
// ones), and re-sending one or all dead ones: a new series of attempts for the same event, so the
// receiver sees the same event id again.
import { DELIVERY_STATES, type DeliveryState } from '../db/entities/index.ts';
import type { EntityManager } from '../db/orm.ts';
import { epochMsOf, isoOf } from '../db/records.ts';
import { statement, type Sql, type Statement } from '../db/sql.ts';
import { ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import type { CursorCodec } from '../pagination/cursor.ts';
import { cursorOf, pageOf, positionAfter, type Keyset } from '../pagination/keyset.ts';
import { PAGE_SIZE } from './limits.ts';
import { InputCheck, requireId } from './validation.ts';
import { endpointNotFound, findEndpoint, type EndpointOwner, type EndpointRecord } from './webhook-endpoints.ts';
import { DELIVERIES_CHANNEL } from '../webhooks/delivery-notifier.ts';

export interface AttemptRecord {
  number: number;
  startedAt: number;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  responseBody: string | null;
  signature: string;
}

export interface DeliveryRecord {
  eventId: string;
  eventType: string;
  status: DeliveryState;
  /** When the next attempt is due; null once it succeeded or went to the dead-letter queue, and while its endpoint is disabled. */
  nextAttemptAt: number | null;
  createdAt: number;
  finishedAt: number | null;
  attempts: AttemptRecord[];
}

/** The delivery as REST's GET shows it: instants in ISO 8601, not the epoch milliseconds it is read as. */
export function deliveryResource(delivery: DeliveryRecord): Record<string, unknown> {
  const at = (instant: number | null) => (instant === null ? null : isoOf(instant));
  return {
    ...delivery,
    nextAttemptAt: at(delivery.nextAttemptAt),
    createdAt: isoOf(delivery.createdAt),
    finishedAt: at(delivery.finishedAt),
    attempts: delivery.attempts.map((attempt) => ({ ...attempt, startedAt: isoOf(attempt.startedAt) })),
  };
}

export interface DeliveryPage {
  items: DeliveryRecord[];
  nextCursor: string | null;
}

const DELIVERY_COLUMNS = `d.event_id as "eventId", ev.type as "eventType", d.state as status,
  case when d.state in ('pending', 'failed') then ${epochMsOf('d.next_attempt_at')} end as "nextAttemptAt",
  ${epochMsOf('d.created_at')} as "createdAt", ${epochMsOf('d.finished_at')} as "finishedAt"`;

/**
 * A page of an endpoint's deliveries (of one state, written into the statement so that the dead-letter
 * queue's partial index serves it), newest first; parameters: endpoint, [before event id], limit.
 */
function deliveriesPage(state: DeliveryState | undefined, after: boolean): Statement {
  const conditions = ['d.endpoint_id = $1'];
  if (state) conditions.push(`d.state = '${state}'`);
  if (after) conditions.push(`d.event_id < $2`);
  return statement(
    `deliveries_${state ?? 'all'}${after ? '_after' : ''}`,
    `select ${DELIVERY_COLUMNS} from webhook_deliveries d join events ev on ev.id = d.event_id
     where ${conditions.join(' and ')} order by d.event_id desc limit $${after ? 3 : 2}`,
  );
}
const PAGES = new Map(
  [undefined, ...DELIVERY_STATES].map((state) => [state, { first: deliveriesPage(state, false), after: deliveriesPage(state, true) }]),
);
const ATTEMPTS = statement(
  'attempts_of_deliveries',
  `select event_id as "eventId", number, ${epochMsOf('started_at')} as "startedAt", duration_ms as "durationMs", status_code as "statusCode",
     error, response_body as "responseBody", signature
   from webhook_attempts where endpoint_id = $1 and event_id = any($2::text[]) order by event_id, number`,
);
const DELIVERY = statement(
  'delivery_by_id',
  `select ${DELIVERY_COLUMNS} from webhook_deliveries d join events ev on ev.id = d.event_id where d.endpoint_id = $1 and d.event_id = $2`,
);
/** Starts a new series of attempts, unless an attempt is under way; wakes the workers. */
const RESEND = statement(
  'delivery_resend',
  `with resent as (
     update webhook_deliveries set state = 'pending', attempts = 0, next_attempt_at = now(), finished_at = null
     where endpoint_id = $1 and event_id = $2 and (locked_until is null or locked_until <= now())
     returning 1)
   select (select count(*)::int from resent) as n, pg_notify('${DELIVERIES_CHANNEL}', '')`,
);
/**
 * Dead deliveries re-sent by one call, the oldest events first: a call is one statement, which the
 * statement time-out bounds, so a dead-letter queue of any size is re-sent in calls that each
 * finish (one call for all of them grew with the queue without bound, and one that outlasted the
 * time-out would re-send none).
 */
export const RESEND_BATCH = 1000;

const RESEND_DEAD = statement(
  'deliveries_resend_dead_batch',
  `with dead as (
     select event_id from webhook_deliveries
     where endpoint_id = $1 and state = 'dead' and finished_at >= coalesce($2, '-infinity'::timestamptz)
       and finished_at < coalesce($3, 'infinity'::timestamptz)),
   chosen as (
     select event_id from dead order by event_id limit ${RESEND_BATCH}),
   resent as (
     update webhook_deliveries d set state = 'pending', attempts = 0, next_attempt_at = now(), finished_at = null
     from chosen c where d.endpoint_id = $1 and d.event_id = c.event_id and d.state = 'dead'
     returning 1)
   select (select count(*)::int from resent) as n, (select count(*)::int from dead) - (select count(*)::int from resent) as remaining,
     pg_notify('${DELIVERIES_CHANNEL}', '')`,
);

/** The endpoint, if `owner` may see it; else NOT_FOUND. */
async function mustOwn(em: EntityManager, owner: EndpointOwner, endpointId: string): Promise<EndpointRecord> {
  const endpoint = await findEndpoint(em, owner, endpointId);
  if (!endpoint) throw endpointNotFound(owner, endpointId);
  return endpoint;
}

/**
 * Deliveries as they stand at `endpoint`: while it is disabled, those waiting have no next attempt
 * due (they wait until it is enabled again), where their due time, soon past, read as an overdue retry.
 */
function asHeldBy<T extends { nextAttemptAt: number | null }>(endpoint: EndpointRecord, rows: T[]): T[] {
  return endpoint.enabled ? rows : rows.map((row) => ({ ...row, nextAttemptAt: null }));
}

/** Each delivery with its attempts, from one more statement for the whole page. */
async function withAttempts(sql: Sql, endpointId: string, rows: Omit<DeliveryRecord, 'attempts'>[]): Promise<DeliveryRecord[]> {
  const attempts = await sql.rows<AttemptRecord & { eventId: string }>(ATTEMPTS, [endpointId, rows.map((row) => row.eventId)]);
  const byEvent = Map.groupBy(attempts, (attempt) => attempt.eventId);
  return rows.map((row) => ({
    ...row,
    attempts: (byEvent.get(row.eventId) ?? []).map(({ eventId: _eventId, ...attempt }) => attempt),
  }));
}

/** An endpoint's deliveries, newest first, optionally of one status, a page at a time. */
export async function listDeliveries(
  em: EntityManager,
  sql: Sql,
  cursors: CursorCodec,
  owner: EndpointOwner,
  args: { endpointId: string; status?: string | null; limit?: number | null; cursor?: string | null },
): Promise<DeliveryPage> {
  const check = new InputCheck();
  const endpointId = check.id('webhookEndpoint', 'endpointId', args.endpointId);
  const status = args.status == null ? undefined : check.oneOf('status', DELIVERY_STATES, args.status);
  const limit = check.pageSize('limit', args.limit, PAGE_SIZE);
  check.done();
  const endpoint = await mustOwn(em, owner, endpointId!);
  const keyset: Keyset<Omit<DeliveryRecord, 'attempts'>> = {
    scope: `deliveries/${endpointId}/${status ?? 'all'}`,
    keyType: 'text',
    key: (delivery) => delivery.eventId,
    id: (delivery) => delivery.eventId,
  };
  const after = args.cursor == null ? undefined : positionAfter(keyset, cursors, args.cursor, 'cursor')[1];
  const statements = PAGES.get(status)!;
  const rows = await sql.rows<Omit<DeliveryRecord, 'attempts'>>(after === undefined ? statements.first : statements.after, [
    endpointId,
    ...(after === undefined ? [] : [after]),
    limit! + 1,
  ]);
  const { items, hasMore } = pageOf(rows, limit!);
  return {
    items: await withAttempts(sql, endpointId!, asHeldBy(endpoint, items)),
    nextCursor: hasMore ? cursorOf(keyset, cursors, items.at(-1)!) : null,
  };
}

/** Re-sends one delivery: a new series of attempts for the same event. */
export async function resendDelivery(
  em: EntityManager,
  sql: Sql,
  owner: EndpointOwner,
  endpointId: string,
  eventId: string,
): Promise<DeliveryRecord> {
  const check = new InputCheck();
  check.id('webhookEndpoint', 'endpointId', endpointId);
  check.id('event', 'eventId', eventId);
  check.done();
  const endpoint = await mustOwn(em, owner, endpointId);
  const [resent] = await sql.rows<{ n: number }>(RESEND, [endpointId, eventId]);
  const [delivery] = await sql.rows<Omit<DeliveryRecord, 'attempts'>>(DELIVERY, [endpointId, eventId]);
  if (!delivery) throw new NotFoundError(`Event ${eventId} has no delivery to webhook endpoint ${endpointId}.`);
  if (resent!.n === 0)
    throw new ConflictError(`Event ${eventId} is being delivered to ${endpointId} right now; try again once the attempt is over.`);
  return (await withAttempts(sql, endpointId, asHeldBy(endpoint, [delivery])))[0]!;
}

/** Re-sends every dead delivery of an endpoint (that went dead within [from, to) when given); returns how many. */
export async function resendDeadDeliveries(
  em: EntityManager,
  sql: Sql,
  owner: EndpointOwner,
  endpointId: string,
  window: { from?: Date | null; to?: Date | null },
): Promise<{ queued: number; remaining: number }> {
  requireId('webhookEndpoint', 'endpointId', endpointId);
  // An empty window would re-send nothing and say so; a reversed one is a mistake worth naming.
  if (window.from && window.to && window.from >= window.to) throw ValidationError.field('to', 'must be later than from');
  await mustOwn(em, owner, endpointId);
  const [resent] = await sql.rows<{ n: number; remaining: number }>(RESEND_DEAD, [endpointId, window.from ?? null, window.to ?? null]);
  return { queued: resent!.n, remaining: resent!.remaining };
}
