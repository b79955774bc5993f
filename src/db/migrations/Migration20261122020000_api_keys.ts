import { Migration } from '@mikro-orm/migrations';

export class Migration20261122020000_api_keys extends Migration {
  override name = 'Migration20261122020000_api_keys';

  override up(): void {
    this.addSql(`create table "api_keys" (
      "id" text collate "C" not null,
      "name" text not null,
      "prefix" text collate "C" not null,
      "secret_hash" text not null,
      "environment" text not null,
      "scopes" text[] not null,
      "allowed_cidrs" text[] not null,
      "rate_limit_per_minute" int null,
      "created_at" timestamptz(3) not null,
      "expires_at" timestamptz(3) null,
      "revoked_at" timestamptz(3) null,
      "last_used_at" timestamptz(3) null,
      "last_used_ip" text null,
      "rotated_from_id" text collate "C" null,
      primary key ("id"),
      constraint "api_keys_name_length_check" check (char_length(name) >= 1 and char_length(name) <= 100),
      constraint "api_keys_rate_limit_check" check (rate_limit_per_minute > 0),
      constraint "api_keys_environment_check" check ("environment" in ('live', 'test'))
    );`);
    // Verification finds a key by its public prefix.
    this.addSql(`alter table "api_keys" add constraint "api_keys_prefix_key" unique ("prefix");`);
  }

  override down(): void {
    this.addSql(`drop table if exists "api_keys";`);
  }
}
