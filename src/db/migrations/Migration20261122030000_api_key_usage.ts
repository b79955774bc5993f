import { Migration } from '@mikro-orm/migrations';

export class Migration20261122030000_api_key_usage extends Migration {
  override name = 'Migration20261122030000_api_key_usage';

  override up(): void {
    // One row per key, day and operation, incremented in batches (never one write per request).
    this.addSql(`create table "api_key_usage" (
      "api_key_id" text collate "C" not null,
      "day" date not null,
      "operation" text not null,
      "requests" bigint not null,
      primary key ("api_key_id", "day", "operation"),
      constraint "api_key_usage_api_key_id_foreign" foreign key ("api_key_id") references "api_keys" ("id") on delete cascade
    );`);
  }

  override down(): void {
    this.addSql(`drop table if exists "api_key_usage";`);
  }
}
