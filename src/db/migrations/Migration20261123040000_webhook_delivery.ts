import { Migration } from '@mikro-orm/migrations';

/**
 * What the delivery worker needs: a lease on each claimed delivery, its states (the dead-letter queue
 * among them), every attempt recorded, why an endpoint was disabled, and a notification when
 * deliveries are queued.
 */
export class Migration20261123040000_webhook_delivery extends Migration {
  override name = 'Migration20261123040000_webhook_delivery';

  override up(): void {
    this.addSql(`alter table "webhook_deliveries" drop constraint "webhook_deliveries_state_check";`);
    this.addSql(`update "webhook_deliveries" set "state" = 'succeeded' where "state" = 'delivered';`);
    this.addSql(
      `alter table "webhook_deliveries" add constraint "webhook_deliveries_state_check" check ("state" in ('pending', 'failed', 'succeeded', 'dead'));`,
    );
    this.addSql(`alter table "webhook_deliveries" add column "locked_until" timestamptz(3) null;`);
    this.addSql(`alter table "webhook_deliveries" add column "attempts_total" int not null default 0;`);
    this.addSql(`alter table "webhook_deliveries" add column "finished_at" timestamptz(3) null;`);
    this.addSql(`drop index "webhook_deliveries_pending_idx";`);
    this.addSql(
      `create index "webhook_deliveries_due_idx" on "webhook_deliveries" ("next_attempt_at") where state in ('pending', 'failed');`,
    );
    // Listing an endpoint's deliveries, newest first; its dead-letter queue on an index of its own (a
    // state in an index of every delivery would cost each settled attempt an index entry more).
    this.addSql(`drop index "webhook_deliveries_endpoint_id_idx";`);
    this.addSql(`create index "webhook_deliveries_endpoint_id_event_id_idx" on "webhook_deliveries" ("endpoint_id", "event_id");`);
    this.addSql(`create index "webhook_deliveries_dead_idx" on "webhook_deliveries" ("endpoint_id", "event_id") where state = 'dead';`);

    this.addSql(`alter table "webhook_endpoints" add column "disabled_reason" text null;`);

    this.addSql(`create table "webhook_attempts" (
      "event_id" text collate "C" not null,
      "endpoint_id" text collate "C" not null,
      "number" int not null,
      "started_at" timestamptz(3) not null,
      "duration_ms" int not null,
      "status_code" int null,
      "error" text null,
      "response_body" text null,
      "signature" text not null,
      primary key ("event_id", "endpoint_id", "number"),
      constraint "webhook_attempts_event_id_endpoint_id_foreign" foreign key ("event_id", "endpoint_id")
        references "webhook_deliveries" ("event_id", "endpoint_id") on update cascade on delete cascade
    );`);

    // Workers are woken when deliveries are queued: one notification per committed transaction.
    this.addSql(
      `create or replace function "webhook_deliveries_webhook_deliveries_queued_fn"() returns trigger as $$ begin perform pg_notify('webhook_deliveries', ''); return null; end; $$ language plpgsql;`,
    );
    this.addSql(
      `create trigger "webhook_deliveries_queued" AFTER INSERT on "webhook_deliveries" for each ROW execute function "webhook_deliveries_webhook_deliveries_queued_fn"();`,
    );
  }

  override down(): void {
    this.addSql(`drop trigger if exists "webhook_deliveries_queued" on "webhook_deliveries";`);
    this.addSql(`drop function if exists "webhook_deliveries_webhook_deliveries_queued_fn"();`);
    this.addSql(`drop table if exists "webhook_attempts";`);
    this.addSql(`alter table "webhook_endpoints" drop column "disabled_reason";`);
  }
}
