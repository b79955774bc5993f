import { Migration } from '@mikro-orm/migrations';

/** Outcomes of writes sent with an Idempotency-Key, one per API key and key value. */
export class Migration20261123020000_idempotency_keys extends Migration {
  override name = 'Migration20261123020000_idempotency_keys';

  override up(): void {
    this.addSql(`create table "idempotency_keys" (
      "api_key_id" text collate "C" not null,
      "key" text collate "C" not null,
      "fingerprint" text not null,
      "status" smallint not null,
      "headers" jsonb not null,
      "body" text null,
      "created_at" timestamptz(3) not null,
      "expires_at" timestamptz(3) not null,
      primary key ("api_key_id", "key"),
      constraint "idempotency_keys_api_key_id_foreign" foreign key ("api_key_id") references "api_keys" ("id") on delete cascade
    );`);
    this.addSql(`create index "idempotency_keys_expires_at_idx" on "idempotency_keys" ("expires_at");`);
  }

  override down(): void {
    this.addSql(`drop table if exists "idempotency_keys";`);
  }
}
