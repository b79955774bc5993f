import { Migration } from '@mikro-orm/migrations';

/**
 * The claim's two look-ups (a live record, an expired one to remove) are by primary key, and must
 * stay so however the table's statistics stand. The service's connections keep one generic plan per
 * statement, made on a connection's first claim; made while the table was empty (a new database,
 * or one whose statistics say so) it scanned the table, and every claim on that connection kept
 * scanning it until the statistics next changed, while each keyed write added a record: half a
 * millisecond of PostgreSQL's time per claim at a few thousand records. With sequential scans off
 * inside the function, its plans read the index at any size.
 */
export class Migration20261127000000_idempotency_claim_by_index extends Migration {
  override name = 'Migration20261127000000_idempotency_claim_by_index';

  override up(): void {
    this.addSql(`alter function "idempotency_claim"(text, text) set enable_seqscan = off;`);
  }

  override down(): void {
    this.addSql(`alter function "idempotency_claim"(text, text) reset enable_seqscan;`);
  }
}
