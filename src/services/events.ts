// The event feed: every recorded change, oldest first, a page at a time, so that a receiver that was
// down can catch up by pulling what webhooks would have pushed. Also the retention purge.
//
// Events are ordered by the id of the transaction that wrote them, then by id, and the feed shows only
// events of transactions older than every transaction still running (the snapshot's xmin). A
// transaction that started earlier but commits later therefore never appears behind a page a reader
// has already passed: paging with the cursor sees every event exactly once, while events are written.
import { idFloor } from '../db/ids.ts';
import type { EntityManager } from '../db/orm.ts';
import { epochMsOf } from '../db/records.ts';
import { statement, type Sql, type Statement } from '../db/sql.ts';
import type { CursorCodec } from '../pagination/cursor.ts';
import { pageOf, positionAfter, type Keyset } from '../pagination/keyset.ts';
import { PING, type EventType } from '../webhooks/event-types.ts';
import { PAGE_SIZE } from './limits.ts';
import { edgesOf, type Page } from '../pagination/edges.ts';
import { InputCheck, requireId } from './validation.ts';

/** An event as every face shows it (and as webhooks deliver it). */
export interface EventRecord {
  id: string;
  type: string;
  createdAt: number;
  data: { object: Record<string, unknown> };
}

type Row = EventRecord & { xact: string };

const COLUMNS = `id, type, ${epochMsOf('created_at')} as "createdAt", data`;

const FEED_ORDER: Keyset<Row> = {
  scope: 'events/feed',
  keyType: 'integer',
  key: (row) => Number(row.xact),
  id: (row) => row.id,
};

/**
 * The feed statement for each combination of "after a cursor" and "of one type"; its parameters are
 * the cursor's (xact, id) when after, the type when given, then the row limit.
 */
function feedPage(after: boolean, ofType: boolean): Statement {
  const conditions = ['xact < pg_snapshot_xmin(pg_current_snapshot())'];
  let next = 1;
  if (after) {
    conditions.push(`(xact, id) > ($1::xid8, $2)`);
    next = 3;
  }
  conditions.push(ofType ? `type = $${next++}` : `type <> '${PING}'`);
  const name = `events_${after ? 'after' : 'first'}${ofType ? '_of_type' : ''}`;
  // Ordered by the columns themselves: a bare `xact` would name the text the row carries out, and
  // sort every event by its digits (10 before 9) instead of reading the (type,) xact, id index.
  return statement(
    name,
    `select ${COLUMNS}, xact::text as xact from events where ${conditions.join(' and ')} order by events.xact, events.id limit $${next}`,
  );
}
const FEED = {
  first: { all: feedPage(false, false), ofType: feedPage(false, true) },
  after: { all: feedPage(true, false), ofType: feedPage(true, true) },
};
const EVENT_BY_ID = statement('event_by_id', `select ${COLUMNS} from events where id = $1 and type <> '${PING}'`);

/** The names a caller gives the page size and the cursor, which errors about them name. */
const CONNECTION_ARGUMENTS = { first: 'first', after: 'after' } as const;

export async function listEvents(
  sql: Sql,
  cursors: CursorCodec,
  args: { first?: number | null; after?: string | null; type?: EventType | null },
  names: { first: string; after: string } = CONNECTION_ARGUMENTS,
): Promise<Page<EventRecord>> {
  const check = new InputCheck();
  const first = check.pageSize(names.first, args.first, PAGE_SIZE);
  check.done();
  const after = args.after == null ? undefined : positionAfter(FEED_ORDER, cursors, args.after, names.after);
  const statements = after === undefined ? FEED.first : FEED.after;
  const rows = await sql.rows<Row>(args.type == null ? statements.all : statements.ofType, [
    ...(after ?? []),
    ...(args.type == null ? [] : [args.type]),
    first! + 1,
  ]);
  const { items, hasMore } = pageOf(rows, first!);
  return { items: edgesOf<Row>(items, FEED_ORDER, cursors), hasNextPage: hasMore };
}

export async function findEvent(sql: Sql, id: string): Promise<EventRecord | null> {
  const [row] = await sql.rows<EventRecord>(EVENT_BY_ID, [requireId('event', 'id', id)]);
  return row ?? null;
}

/** Events deleted per statement by the retention purge. */
export const EVENT_PURGE_BATCH = 1000;

/**
 * Deletes events older than `retentionMs` (with their deliveries), a bounded batch per statement,
 * until none is left or `maxBatches` ran; returns how many went. Event ids begin with their creation
 * time, so the oldest are found on the primary key. An event with a delivery not yet succeeded (still
 * due, or dead-lettered) is kept: the dead-letter queue is emptied only by hand.
 */
export async function purgeOldEvents(em: EntityManager, retentionMs: number, maxBatches = 100): Promise<number> {
  const floor = idFloor('event', new Date(Date.now() - retentionMs));
  let deleted = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    const rows = await em.execute<{ n: number }[]>(
      `with gone as (
         delete from events where id in (
           select id from events where id < ?
             and not exists (select 1 from webhook_deliveries d where d.event_id = events.id and d.state <> 'succeeded')
           order by id limit ?)
         returning 1)
       select count(*)::int as n from gone`,
      [floor, EVENT_PURGE_BATCH],
    );
    const n = rows[0]?.n ?? 0;
    deleted += n;
    if (n < EVENT_PURGE_BATCH) break;
  }
  return deleted;
}
