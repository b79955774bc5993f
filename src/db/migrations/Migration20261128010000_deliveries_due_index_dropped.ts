import { Migration } from '@mikro-orm/migrations';

/**
 * Claims read each endpoint's due deliveries by `webhook_deliveries_endpoint_due_idx`. With the index
 * on the due time alone beside it, PostgreSQL could read an idle endpoint's due deliveries along that
 * one instead, filtering out every other endpoint's on the way: where one endpoint had a backlog and
 * statistics said all deliveries were its, a claim over 2,000 endpoints read the backlog once for
 * each of them (14 s, against 5 ms by endpoint). Nothing else reads by the due time alone.
 */
export class Migration20261128010000_deliveries_due_index_dropped extends Migration {
  override name = 'Migration20261128010000_deliveries_due_index_dropped';

  override up(): void {
    this.addSql(`drop index if exists "webhook_deliveries_due_idx";`);
  }

  override down(): void {
    this.addSql(
      `create index "webhook_deliveries_due_idx" on "webhook_deliveries" ("next_attempt_at") where state in ('pending', 'failed');`,
    );
  }
}
