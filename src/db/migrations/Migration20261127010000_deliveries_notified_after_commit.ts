import { Migration } from '@mikro-orm/migrations';

/**
 * Workers are woken after a write that queued deliveries has committed, by the service
 * (webhooks/delivery-notifier.ts), no longer by a trigger inside the write: PostgreSQL makes every
 * transaction that sends NOTIFY take one lock for the whole database from its commit until the
 * commit is on disk, so concurrent writes with subscribed endpoints committed one at a time.
 */
export class Migration20261127010000_deliveries_notified_after_commit extends Migration {
  override name = 'Migration20261127010000_deliveries_notified_after_commit';

  override up(): void {
    this.addSql(`drop trigger if exists "webhook_deliveries_queued" on "webhook_deliveries";`);
    this.addSql(`drop function if exists "webhook_deliveries_webhook_deliveries_queued_fn"();`);
  }

  override down(): void {
    this.addSql(
      `create or replace function "webhook_deliveries_webhook_deliveries_queued_fn"() returns trigger as $$ begin perform pg_notify('webhook_deliveries', ''); return null; end; $$ language plpgsql;`,
    );
    this.addSql(
      `create trigger "webhook_deliveries_queued" AFTER INSERT on "webhook_deliveries" for each ROW execute function "webhook_deliveries_webhook_deliveries_queued_fn"();`,
    );
  }
}
