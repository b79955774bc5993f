import { Migration } from '@mikro-orm/migrations';

/** Where an event came from in traces: the writing request's `traceparent`, linked from its delivery attempts. */
export class Migration20261123050000_event_traceparent extends Migration {
  override name = 'Migration20261123050000_event_traceparent';

  override up(): void {
    this.addSql(`alter table "events" add column "traceparent" text null;`);
  }
}
