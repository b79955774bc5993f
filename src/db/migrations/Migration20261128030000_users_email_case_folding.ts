import { Migration } from '@mikro-orm/migrations';

/**
 * Emails are unique ignoring letter case, and lowering letters alone does not ignore it: `straße@`
 * and `STRASSE@`, `ſam@` and `sam@`, `µ@` and `μ@` lowered stay two spellings, so they could be two
 * accounts. Full case folding makes them one. PostgreSQL has `casefold()` from version 18 only;
 * with ICU, lowering, upper-casing (ß is SS, ſ is S, µ is Μ), then lowering again folds as Unicode's
 * full case folding does on every server built with ICU, but for one letter: the dotless `ı`,
 * which folding keeps apart from `i`, is one with it here (refusing a second account, never allowing
 * two). The first lowering is for `ẞ`, whose upper case is itself. As in the earlier letter case
 * migration, a server without ICU keeps the index it has, and so does a database holding accounts
 * the new rule would make one: no account is merged or dropped, a warning says how many, for an
 * operator to resolve and migrate again (down, then up).
 */
export class Migration20261128030000_users_email_case_folding extends Migration {
  override name = 'Migration20261128030000_users_email_case_folding';

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
          select 1 from "users" group by lower(upper(lower("email" collate "und-x-icu"))) having count(*) > 1
        ) as groups;
        if colliding > 0 then
          raise warning '% emails belong to more than one user once letter case is folded in full (ß as ss); the index keeps the rule it has until each account has an email of its own', colliding;
          return;
        end if;
        drop index "users_email_lower_key";
        create unique index "users_email_lower_key" on "users" (lower(upper(lower("email" collate "und-x-icu"))));
      end $$;`);
  }

  override down(): void {
    // Back to lowering with ICU, where up() folded.
    this.addSql(`
      do $$
      begin
        if exists (select 1 from pg_indexes where indexname = 'users_email_lower_key' and indexdef like '%upper(%') then
          drop index "users_email_lower_key";
          create unique index "users_email_lower_key" on "users" (lower("email" collate "und-x-icu"));
        end if;
      end $$;`);
  }
}
