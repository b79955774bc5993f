import { Migration } from '@mikro-orm/migrations';

/**
 * Case folding by upper-casing can leave a text that NFC writes otherwise: `ΐ` (U+0390) upper-cases
 * to Ϊ́ (U+0399 U+0308 U+0301), while `Ϊ́`, stored in NFC as U+03AA U+0301, lowers to U+03CA U+0301;
 * canonically one string, as code points two, so the two spellings were two accounts. The folded
 * text is now put in NFC before it is compared. As in the earlier migrations of the rule, a server
 * without ICU keeps the index it has, and so does a database holding accounts the new rule would
 * make one: nothing is merged or dropped, a warning says how many.
 */
const FOLDED_EMAIL = `normalize(lower(upper(lower("email" collate "und-x-icu"))), NFC)`;

export class Migration20261128040000_users_email_fold_normalized extends Migration {
  override name = 'Migration20261128040000_users_email_fold_normalized';

  override up(): void {
    this.addSql(`
      do $$
      declare
        colliding bigint;
      begin
        if not exists (select 1 from pg_indexes where indexname = 'users_email_lower_key' and indexdef like '%upper(%') then
          return;
        end if;
        select count(*) into colliding from (select 1 from "users" group by ${FOLDED_EMAIL} having count(*) > 1) as groups;
        if colliding > 0 then
          raise warning '% emails belong to more than one user once folded letter case is put in NFC; the index keeps the rule it has until each account has an email of its own', colliding;
          return;
        end if;
        drop index "users_email_lower_key";
        create unique index "users_email_lower_key" on "users" (${FOLDED_EMAIL});
      end $$;`);
  }

  override down(): void {
    this.addSql(`
      do $$
      begin
        if exists (select 1 from pg_indexes where indexname = 'users_email_lower_key' and indexdef ilike '%normalize(%') then
          drop index "users_email_lower_key";
          create unique index "users_email_lower_key" on "users" (lower(upper(lower("email" collate "und-x-icu"))));
        end if;
      end $$;`);
  }
}
