// Changes to one user take a lock on that user before their first write: its updates and deletion
// alone, the creation of its orders shared (they do not wait for each other, only for those).
//
// Why: PostgreSQL gives a transaction its id at its first write, and the event feed is in the order
// of those ids (services/events.ts). A change that waited for another's row lock already held an id
// older than the one it waited for, so its event came first in the feed although its change came
// second, and a reader replaying the feed ended with a user other than the stored one, or with orders
// of a deleted user. An advisory lock needs no transaction id: waited for before the first write, it
// makes a change's id younger than that of every change to the user it waited for.

import { prepared } from './prepared.ts';

/** The advisory locks' class, their first key; the second is the user id's hash (a shared hash only makes two users wait for each other). */
const USERS = 1;

/** Locks the user whose id is `parameter` (e.g. `$1`) until the transaction ends. */
export const lockUser = (parameter: string) => `pg_advisory_xact_lock(${USERS}, hashtext(${parameter}))`;

/** The same lock, shared: taken by changes that may run beside each other but not beside the user's update or deletion. */
export const lockUserShared = (parameter: string) => `pg_advisory_xact_lock_shared(${USERS}, hashtext(${parameter}))`;

/**
 * Locks every user of `$1` (text[]) alone, in the array's order, in one statement: a document of
 * several mutations takes, before its first write, the locks of every user it names (sorted, so that
 * two documents take theirs in one order and never wait for each other in a circle). Taken mutation
 * by mutation, a later one waited for its user after an earlier one had written, with the transaction
 * id already given, and its change came before, in the feed, changes that had taken effect first.
 */
export const LOCK_USERS = prepared(
  'lock_users',
  `select count(*)::int as n from (select ${lockUser('u')} from unnest($1::text[]) as u) as held`,
);
