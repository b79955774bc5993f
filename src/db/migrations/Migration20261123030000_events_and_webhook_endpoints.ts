import { Migration } from '@mikro-orm/migrations';

/** The outbox (events, and a delivery per subscribed endpoint), webhook endpoints, and API key lineages that own them. */
export class Migration20261123030000_events_and_webhook_endpoints extends Migration {
  override name = 'Migration20261123030000_events_and_webhook_endpoints';

  override up(): void {
    this.addSql(`alter table "api_keys" add column "lineage_id" text collate "C" null;`);
    this.addSql(`with recursive chain (id, lineage_id) as (
        select id, id from api_keys where rotated_from_id is null
        union all
        select k.id, chain.lineage_id from api_keys k join chain on k.rotated_from_id = chain.id)
      update api_keys set lineage_id = chain.lineage_id from chain where api_keys.id = chain.id;`);
    // A key whose predecessor is gone starts a lineage of its own.
    this.addSql(`update api_keys set lineage_id = id where lineage_id is null;`);
    this.addSql(`alter table "api_keys" alter column "lineage_id" set not null;`);

    this.addSql(`create table "events" (
      "id" text collate "C" not null,
      "type" text not null,
      "xact" xid8 not null default pg_current_xact_id(),
      "created_at" timestamptz(3) not null,
      "data" jsonb not null,
      primary key ("id")
    );`);
    this.addSql(`create index "events_xact_id_idx" on "events" ("xact", "id");`);
    this.addSql(`create index "events_type_xact_id_idx" on "events" ("type", "xact", "id");`);

    this.addSql(`create table "webhook_endpoints" (
      "id" text collate "C" not null,
      "owner_key_id" text collate "C" not null,
      "url" text not null,
      "event_types" text[] null,
      "description" text null,
      "enabled" boolean not null default true,
      "secret" text not null,
      "previous_secret" text null,
      "previous_secret_expires_at" timestamptz(3) null,
      "created_at" timestamptz(3) not null,
      "updated_at" timestamptz(3) not null,
      primary key ("id"),
      constraint "webhook_endpoints_url_length_check" check (char_length(url) <= 2048)
    );`);
    this.addSql(`create index "webhook_endpoints_owner_key_id_id_idx" on "webhook_endpoints" ("owner_key_id", "id");`);

    this.addSql(`create table "webhook_deliveries" (
      "event_id" text collate "C" not null,
      "endpoint_id" text collate "C" not null,
      "state" text not null default 'pending',
      "attempts" int not null default 0,
      "next_attempt_at" timestamptz(3) not null default now(),
      "created_at" timestamptz(3) not null default now(),
      primary key ("event_id", "endpoint_id"),
      constraint "webhook_deliveries_event_id_foreign" foreign key ("event_id") references "events" ("id") on update cascade on delete cascade,
      constraint "webhook_deliveries_endpoint_id_foreign" foreign key ("endpoint_id") references "webhook_endpoints" ("id") on update cascade on delete cascade,
      constraint "webhook_deliveries_state_check" check ("state" in ('pending', 'delivered', 'failed'))
    );`);
    this.addSql(`create index "webhook_deliveries_pending_idx" on "webhook_deliveries" ("next_attempt_at") where state = 'pending';`);
    this.addSql(`create index "webhook_deliveries_endpoint_id_idx" on "webhook_deliveries" ("endpoint_id");`);
  }

  override down(): void {
    this.addSql(`drop table if exists "webhook_deliveries";`);
    this.addSql(`drop table if exists "webhook_endpoints";`);
    this.addSql(`drop table if exists "events";`);
    this.addSql(`alter table "api_keys" drop column "lineage_id";`);
  }
}
