// Migrations are listed explicitly rather than globbed, so the same list works from source,
// in tests and in the container image. Append new ones in order.
import { Migration20261122000000_initial } from './Migration20261122000000_initial.ts';
import { Migration20261122010000_users_name_index } from './Migration20261122010000_users_name_index.ts';
import { Migration20261122020000_api_keys } from './Migration20261122020000_api_keys.ts';
import { Migration20261122030000_api_key_usage } from './Migration20261122030000_api_key_usage.ts';
import { Migration20261123000000_users_email_nfc } from './Migration20261123000000_users_email_nfc.ts';
import { Migration20261123010000_api_keys_created_at_index } from './Migration20261123010000_api_keys_created_at_index.ts';
import { Migration20261123020000_idempotency_keys } from './Migration20261123020000_idempotency_keys.ts';
import { Migration20261123030000_events_and_webhook_endpoints } from './Migration20261123030000_events_and_webhook_endpoints.ts';
import { Migration20261123040000_webhook_delivery } from './Migration20261123040000_webhook_delivery.ts';
import { Migration20261123050000_event_traceparent } from './Migration20261123050000_event_traceparent.ts';
import { Migration20261124000000_webhook_deliveries_fillfactor } from './Migration20261124000000_webhook_deliveries_fillfactor.ts';
import { Migration20261125000000_idempotency_claim } from './Migration20261125000000_idempotency_claim.ts';
import { Migration20261127000000_idempotency_claim_by_index } from './Migration20261127000000_idempotency_claim_by_index.ts';
import { Migration20261127010000_deliveries_notified_after_commit } from './Migration20261127010000_deliveries_notified_after_commit.ts';
import { Migration20261127020000_users_email_unicode_case } from './Migration20261127020000_users_email_unicode_case.ts';
import { Migration20261128000000_deliveries_due_by_endpoint } from './Migration20261128000000_deliveries_due_by_endpoint.ts';
import { Migration20261128010000_deliveries_due_index_dropped } from './Migration20261128010000_deliveries_due_index_dropped.ts';
import { Migration20261128020000_users_name_collation } from './Migration20261128020000_users_name_collation.ts';
import { Migration20261128030000_users_email_case_folding } from './Migration20261128030000_users_email_case_folding.ts';
import { Migration20261128040000_users_email_fold_normalized } from './Migration20261128040000_users_email_fold_normalized.ts';
import { Migration20261128050000_api_keys_lineage_index } from './Migration20261128050000_api_keys_lineage_index.ts';

export const migrations = [
  Migration20261122000000_initial,
  Migration20261122010000_users_name_index,
  Migration20261122020000_api_keys,
  Migration20261122030000_api_key_usage,
  Migration20261123000000_users_email_nfc,
  Migration20261123010000_api_keys_created_at_index,
  Migration20261123020000_idempotency_keys,
  Migration20261123030000_events_and_webhook_endpoints,
  Migration20261123040000_webhook_delivery,
  Migration20261123050000_event_traceparent,
  Migration20261124000000_webhook_deliveries_fillfactor,
  Migration20261125000000_idempotency_claim,
  Migration20261127000000_idempotency_claim_by_index,
  Migration20261127010000_deliveries_notified_after_commit,
  Migration20261127020000_users_email_unicode_case,
  Migration20261128000000_deliveries_due_by_endpoint,
  Migration20261128010000_deliveries_due_index_dropped,
  Migration20261128020000_users_name_collation,
  Migration20261128030000_users_email_case_folding,
  Migration20261128040000_users_email_fold_normalized,
  Migration20261128050000_api_keys_lineage_index,
];
