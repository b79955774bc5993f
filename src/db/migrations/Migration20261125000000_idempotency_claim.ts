import { Migration } from '@mikro-orm/migrations';

/**
 * Claiming an idempotency key as one function that refuses with an error: it can then open the
 * write's transaction in the same message as the write's first statement (db/transaction-edges.ts),
 * and a key that is in use or recorded stops the rest of that message from running. The lock is
 * transaction-scoped, so it is freed with the transaction, however that ends. The error codes are
 * the service's own class (PI): PI409, another transaction holds the key; PI200, the key has a live
 * record (which the service then reads: the error names no value, since PostgreSQL logs its errors).
 * An expired record of the key goes once the lock is held, so that recording the outcome is a plain
 * insert, which fails when another request's record is live.
 */
export class Migration20261125000000_idempotency_claim extends Migration {
  override name = 'Migration20261125000000_idempotency_claim';

  override up(): void {
    this.addSql(`create function "idempotency_claim"(claimed_api_key_id text, claimed_key text) returns void
      language plpgsql as $$
      begin
        if not pg_try_advisory_xact_lock(hashtextextended(claimed_api_key_id || E'\\n' || claimed_key, 0)) then
          raise exception 'idempotency key in use' using errcode = 'PI409';
        end if;
        perform from idempotency_keys k where k.api_key_id = claimed_api_key_id and k.key = claimed_key and k.expires_at > now();
        if found then
          raise exception 'idempotency key recorded' using errcode = 'PI200';
        end if;
        delete from idempotency_keys k where k.api_key_id = claimed_api_key_id and k.key = claimed_key;
      end
      $$;`);
  }

  override down(): void {
    this.addSql(`drop function if exists "idempotency_claim"(text, text);`);
  }
}
