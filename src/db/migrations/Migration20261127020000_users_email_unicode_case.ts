import { Migration } from '@mikro-orm/migrations';

/**
 * Emails are unique ignoring letter case, and `lower()` folds letter case as the collation of its
 * argument says: with the database's default collation that is the locale the cluster was made
 * with, and under the C locale (the embedded PostgreSQL's, and many images') only A to Z, so
 * `åsa@…` and `ÅSA@…` were two accounts. The index now folds with ICU's root locale, the same on
 * every server built with ICU (PostgreSQL's packages and images are); one without ICU keeps the
 * index it has. So does a database holding accounts that the new rule would make one: as with the
 * NFC migration, a migration never fails on data, and no account is merged or dropped; it says so
 * in a warning, naming how many, for an operator to resolve and migrate again (down, then up).
 */
export class Migration20261127020000_users_email_unicode_case extends Migration {
  override name = 'Migration20261127020000_users_email_unicode_case';

  override up(): void {
    this.addSql(`
      do $$
      declare
        colliding bigint;
      begin
        if not exists (select 1 from pg_collation where collname = 'und-x-icu') then
          return;
        end if;
        select count(*) into colliding from (
          select 1 from "users" group by lower("email" collate "und-x-icu") having count(*) > 1
        ) as groups;
        if colliding > 0 then
          raise warning '% emails belong to more than one user once letter case beyond A to Z is ignored; the index keeps comparing A to Z only until each account has an email of its own', colliding;
          return;
        end if;
        drop index "users_email_lower_key";
        create unique index "users_email_lower_key" on "users" (lower("email" collate "und-x-icu"));
      end $$;`);
  }

  override down(): void {
    this.addSql(`drop index "users_email_lower_key";`);
    this.addSql(`create unique index "users_email_lower_key" on "users" (lower("email"));`);
  }
}
