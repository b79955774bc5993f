// Portico's statements are prepared once per connection (sql.ts, prepared.ts, plain-text.ts) so that
// PostgreSQL plans them once. By default it does not: it plans a prepared statement again for the
// values of each run for as long as its generic plan looks costlier than one made for those values,
// and a generic plan whose LIMIT is a parameter is costed for a tenth of the table, so a page (every
// list here ends in `limit $n`) was planned afresh on every request. Planning cost PostgreSQL more
// than running the page: with generic plans its CPU per `users(first: 20)` fell from 0.19 to 0.11 ms.
// Every statement Portico prepares reads by index whatever its values, which the generic plans of all
// of them were checked to do (an EXISTS whose plan scanned the table now asks for the index's order).
import type pg from 'pg';

const GENERIC_PLANS = 'set plan_cache_mode = force_generic_plan';

/**
 * The pool's hook for a connection it just opened: it hands the connection out once this resolves,
 * so the setting is in force before the first statement and nothing queues behind it (node-postgres
 * warns of a statement sent while another waits, and 9.0 removes that). A failure here is the
 * connection's own: the pool closes it and the caller meets the error, as with a failed log-in.
 */
export async function planStatementsOnce(client: pg.ClientBase): Promise<void> {
  await client.query(GENERIC_PLANS);
}
