import { Migration } from '@mikro-orm/migrations';

/**
 * Emails are compared NFC-normalised from now on (the service normalises what it stores); rows
 * written before are brought to the same form, so `café` typed as NFD cannot slip past an NFC
 * `café`. A row whose normalised form would collide with another account keeps its spelling
 * rather than failing the migration. `normalize` exists only on UTF8 databases.
 */
export class Migration20261123000000_users_email_nfc extends Migration {
  override name = 'Migration20261123000000_users_email_nfc';

  override up(): void {
    this.addSql(`
      do $$
      begin
        if current_setting('server_encoding') = 'UTF8' then
          update "users" u set "email" = normalize(u."email", nfc)
          where u."email" is not nfc normalized
            and not exists (
              select 1 from "users" o where o."id" <> u."id" and lower(o."email") = lower(normalize(u."email", nfc))
            );
        end if;
      end $$;`);
  }

  override down(): void {
    // Normalised spellings are equivalent to the originals; nothing to undo.
  }
}
