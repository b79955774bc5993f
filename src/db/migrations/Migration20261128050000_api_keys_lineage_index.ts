import { Migration } from '@mikro-orm/migrations';

/** Serves the look for a key left in a lineage, when its webhook endpoints may have to be disabled. */
export class Migration20261128050000_api_keys_lineage_index extends Migration {
  override name = 'Migration20261128050000_api_keys_lineage_index';

  override up(): void {
    this.addSql(`create index "api_keys_lineage_id_idx" on "api_keys" ("lineage_id");`);
  }

  override down(): void {
    this.addSql(`drop index if exists "api_keys_lineage_id_idx";`);
  }
}
