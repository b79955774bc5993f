import { Migration } from '@mikro-orm/migrations';

/**
 * Users sorted by name come in the order people read names in, whatever the server's locale: with
 * the database's default collation they came in the locale the cluster was made with, and under the
 * C locale (the embedded PostgreSQL's, and many images') in byte order, every capital before every
 * small letter and `Émile` after `zz`. ICU's root collation is the same on every server built with
 * ICU (PostgreSQL's packages and images are); one without ICU keeps the order it has. Its ties are
 * still broken byte by byte, so equal names stay equal only when they are the same text, and the
 * keyset of (name, id) behind `sort=name` cursors stays a total order. The column's index is rebuilt
 * with it; the table is not rewritten.
 */
export class Migration20261128020000_users_name_collation extends Migration {
  override name = 'Migration20261128020000_users_name_collation';

  override up(): void {
    this.addSql(`
      do $$
      begin
        if exists (select 1 from pg_collation where collname = 'und-x-icu') then
          alter table "users" alter column "name" type text collate "und-x-icu";
        end if;
      end $$;`);
  }

  override down(): void {
    this.addSql(`alter table "users" alter column "name" type text collate "default";`);
  }
}
