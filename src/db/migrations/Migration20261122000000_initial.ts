import { Migration } from '@mikro-orm/migrations';

export class Migration20261122000000_initial extends Migration {
  override name = 'Migration20261122000000_initial';

  override up(): void {
    this.addSql(`create table "users" (
      "id" text collate "C" not null,
      "name" text not null,
      "email" text not null,
      "created_at" timestamptz(3) not null,
      "updated_at" timestamptz(3) not null,
      primary key ("id"),
      constraint "users_name_length_check" check (char_length(name) >= 1 and char_length(name) <= 200)
    );`);
    this.addSql(`create index "users_created_at_id_idx" on "users" ("created_at", "id");`);
    this.addSql(`create unique index "users_email_lower_key" on "users" (lower("email"));`);

    this.addSql(`create table "orders" (
      "id" text collate "C" not null,
      "user_id" text collate "C" not null,
      "total" int not null,
      "status" text not null default 'pending',
      "created_at" timestamptz(3) not null,
      primary key ("id"),
      constraint "orders_total_check" check (total >= 0),
      constraint "orders_status_check" check ("status" in ('pending', 'paid', 'shipped', 'delivered', 'cancelled')),
      constraint "orders_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade
    );`);
    // Serves "a user's orders, newest first" (scanned backwards) and the cascade on user delete.
    this.addSql(`create index "orders_user_id_created_at_id_idx" on "orders" ("user_id", "created_at", "id");`);
  }

  override down(): void {
    this.addSql(`drop table if exists "orders";`);
    this.addSql(`drop table if exists "users";`);
  }
}
