import { Migration } from '@mikro-orm/migrations';

/**
 * The worker takes due deliveries endpoint by endpoint, each endpoint's earliest first
 * (webhooks/deliveries.ts), so that one receiver that hangs holds only its own places. A claim
 * changes neither column nor the state, so claims stay HOT updates.
 */
export class Migration20261128000000_deliveries_due_by_endpoint extends Migration {
  override name = 'Migration20261128000000_deliveries_due_by_endpoint';

  override up(): void {
    this.addSql(
      `create index "webhook_deliveries_endpoint_due_idx" on "webhook_deliveries" ("endpoint_id", "next_attempt_at") where state in ('pending', 'failed');`,
    );
  }

  override down(): void {
    this.addSql(`drop index "webhook_deliveries_endpoint_due_idx";`);
  }
}
