// Portico's statements are prepared once per connection (sql.ts, prepared.ts, plain-text.ts) so that
// PostgreSQL plans them once. By default it does not: it plans a prepared statement again for the
// values of each run for as long as its generic plan looks costlier than one made for those values,
// and a generic plan whose LIMIT is a parameter is costed for a tenth of the table, so a page (every
// list here ends in `limit $n`) was planned afresh on every request. Planning cost PostgreSQL more
// than running the page: with generic plans its CPU per `users(first: 20)` fell from 0.19 to 0.11 ms.
// Every statement Portico prepares reads by index whatever its values, which the generic plans of all
// of them were checked to do (an EXISTS whose plan scanned the table now asks for the index's order).
//
// Nor is any plan of these connections a sequential scan where an index serves. A plan is kept for as
// long as its connection lives (or until the table is analysed again), and one made while a table was
// empty or nearly so scans it, cheaply then, and then ever more dearly as the table grows: PostgreSQL's
// own check of each webhook delivery's event (its foreign key), planned while the events table was
// empty, scanned every event ever written on every write, and writes with a subscribed endpoint fell
// from 2,557 to 791 a second within 25 s (with the scan off, 6,080 a second throughout). Every access
// path has its index; a table with none is still read whole (small ones, such as webhook_endpoints).
//
// And no statement is compiled by PostgreSQL's JIT. Before PostgreSQL 18, a plan that still scans a
// table with sequential scans off carries a penalty of 10^10 in its cost, far above the JIT's
// thresholds, so where the server has JIT (most packaged builds of 11–17 do, and it is on by
// default) every write, whose event is matched against webhook_endpoints, was compiled afresh on
// each run: 110 ms of LLVM per `createOrder` on PostgreSQL 15, where the statement itself takes
// 0.2, and 50 writes at a time queued for the pool until they answered 503. The JIT pays only for
// long analytical queries; every statement here reads or writes a few rows by index.
import type pg from 'pg';

const GENERIC_PLANS = 'set plan_cache_mode = force_generic_plan; set enable_seqscan = off; set jit = off';

/**
 * The pool's hook for a connection it just opened: it hands the connection out once this resolves,
 * so the setting is in force before the first statement and nothing queues behind it (node-postgres
 * warns of a statement sent while another waits, and 9.0 removes that). A failure here is the
 * connection's own: the pool closes it and the caller meets the error, as with a failed log-in.
 */
export async function planStatementsOnce(client: pg.ClientBase): Promise<void> {
  await client.query(GENERIC_PLANS);
}
