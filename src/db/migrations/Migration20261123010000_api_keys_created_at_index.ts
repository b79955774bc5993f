import { Migration } from '@mikro-orm/migrations';

/** Serves the API key verifier's periodic look for keys created lately. */
export class Migration20261123010000_api_keys_created_at_index extends Migration {
  override name = 'Migration20261123010000_api_keys_created_at_index';

  override up(): void {
    this.addSql(`create index "api_keys_created_at_idx" on "api_keys" ("created_at");`);
  }

  override down(): void {
    this.addSql(`drop index if exists "api_keys_created_at_idx";`);
  }
}
