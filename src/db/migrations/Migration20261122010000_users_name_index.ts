import { Migration } from '@mikro-orm/migrations';

/** Serves listing users sorted by name (either direction), with the id as tie-breaker. */
export class Migration20261122010000_users_name_index extends Migration {
  override name = 'Migration20261122010000_users_name_index';

  override up(): void {
    this.addSql(`create index "users_name_id_idx" on "users" ("name", "id");`);
  }

  override down(): void {
    this.addSql(`drop index if exists "users_name_id_idx";`);
  }
}
