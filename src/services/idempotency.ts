// Idempotency keys: a write sent with an `Idempotency-Key` runs once. Its outcome is recorded in the
// same transaction as the write itself, so there is never a write without its record nor a record of
// a write that rolled back; a retry is answered from the record, byte for byte.
//
// While a write runs, its transaction holds a PostgreSQL advisory lock on (API key, key value): a
// concurrent request with the same key finds the lock taken and is refused at once (never waits), on
// any instance. The lock lives exactly as long as the transaction, so a process that dies mid-write
// leaves nothing stuck: PostgreSQL rolls the transaction back and frees the lock as soon as it sees
// the connection gone (at once when the process dies; within the TCP keepalive or the idle-in-
// transaction timeout when its machine does), and the retry then runs the write once.
import { hash } from 'node:crypto';
import type { ControlledTransaction } from 'kysely';
import type { EntityManager } from '../db/orm.ts';
import { REFUSED_CLAIM, violatedConstraint } from '../db/failures.ts';
import { execute, planned, runPlainText } from '../db/plain-text.ts';
import { riderText } from '../db/transaction-edges.ts';
import { prepared, runPrepared, type StatementRunner } from '../db/prepared.ts';
import { IdempotencyKeyInFlightError, IdempotencyKeyReusedError, PROBLEM_KINDS, ValidationError, type ProblemKind } from '../errors.ts';

/** The request header, as clients send it and errors name it. */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
/** Set on an answer replayed from a record. */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
/** Printable ASCII, space included. */
const KEY_PATTERN = new RegExp(`^[\\x20-\\x7e]{1,${IDEMPOTENCY_KEY_MAX_LENGTH}}$`);
/** Response headers that belong to a write's outcome, and so are kept and replayed. */
export const RECORDED_HEADERS = ['content-type', 'location'] as const;
/** Refusals of the key itself: the request did not run as its own. */
export const KEY_REFUSALS = ['idempotency-key-in-flight', 'idempotency-key-reused'] as const satisfies readonly ProblemKind[];

/**
 * Not outcomes to keep: a failure of ours (5xx), the rate limiter's refusal, and a caller not
 * identified (401: no valid key, no user token or one that does not verify), whose retry with the
 * credential must run. A 403 is an answer to an identified caller, kept like any other 4xx.
 */
export const NOT_KEPT: ReadonlySet<number> = new Set([401, 429]);
/** Whether an answer of this kind is kept, and replayed to a retry. */
export const isKept = (kind: ProblemKind) => PROBLEM_KINDS[kind].status < 500 && !NOT_KEPT.has(PROBLEM_KINDS[kind].status);

/** Expired records deleted per statement by the background purge. */
export const PURGE_BATCH = 1000;

/** The header's value, checked: 1 to 255 printable ASCII characters. */
export function checkIdempotencyKey(value: string): string {
  if (KEY_PATTERN.test(value)) return value;
  throw ValidationError.field(
    IDEMPOTENCY_KEY_HEADER,
    `must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters (got ${value.length} characters${/[^\x20-\x7e]/.test(value) ? ', some outside printable ASCII' : ''})`,
  );
}

/** An array index as an object key: such keys come first in an object, in numeric order. */
const INDEX_KEY = /^(?:0|[1-9]\d{0,9})$/;
const isIndexKey = (key: string) => INDEX_KEY.test(key) && Number(key) < 2 ** 32 - 1;

/**
 * The keys of an object in canonical order: sorted by UTF-16 code units, array indices first in
 * numeric order, as JavaScript orders the keys of an object built with them sorted. The text must
 * not change from one version to the next: records keep the fingerprints of requests, and a retry
 * after an upgrade must still match its own.
 */
function canonicalKeys(object: object): string[] {
  const indices: string[] = [];
  const names: string[] = [];
  for (const key of Object.keys(object).sort()) (isIndexKey(key) ? indices : names).push(key);
  return indices.length === 0 ? names : [...indices.sort((a, b) => Number(a) - Number(b)), ...names];
}

/**
 * A JSON value as JSON text with object keys in canonical order at every level: equal values, equal
 * text (what JSON.stringify writes of the value with each object's keys sorted).
 */
export function canonicalJson(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  // Whatever JSON.stringify would write of it (a Date's toJSON), canonical in turn.
  if ('toJSON' in value && typeof value.toJSON === 'function') {
    const text = JSON.stringify(value);
    return text === undefined ? undefined : canonicalJson(JSON.parse(text));
  }
  if (Array.isArray(value)) return `[${value.map((item: unknown) => canonicalJson(item) ?? 'null').join(',')}]`;
  const members: string[] = [];
  for (const key of canonicalKeys(value)) {
    const text = canonicalJson(Reflect.get(value, key));
    if (text !== undefined) members.push(`${JSON.stringify(key)}:${text}`);
  }
  return `{${members.join(',')}}`;
}

/** What a request asks for, as one hash: a retry must ask for exactly the same. */
export function fingerprintOf(parts: readonly unknown[]): string {
  return hash('sha256', canonicalJson(parts) ?? '', 'hex');
}

/** A response as recorded: what a replay sends again. */
export interface RecordedOutcome {
  status: number;
  headers: Record<string, string>;
  body: string | null;
}

export interface IdempotencyScope {
  apiKeyId: string;
  key: string;
  fingerprint: string;
  /**
   * The same request's fingerprint as versions before it named the user a token acts for: a record
   * such a version wrote (within IDEMPOTENCY_TTL of an upgrade) still answers its retry, where the
   * retry was refused as another request.
   */
  earlierFingerprint?: string;
}

type Stored = RecordedOutcome & { fingerprint: string };

/**
 * Claims a key for the transaction (the migration's idempotency_claim): its lock, or an error whose
 * code says why not (REFUSED_CLAIM). It rides with BEGIN, in one message with the write's first
 * statement (db/transaction-edges.ts).
 */
const CLAIM = prepared('idempotency_claim', 'select idempotency_claim($1, $2)');

/** Records an outcome; planned, so that it travels in one message with the COMMIT after it. */
const RECORD = planned(
  'idempotency_record',
  ['text', 'text', 'text', 'smallint', 'jsonb', 'text', 'bigint'],
  `insert into idempotency_keys (api_key_id, key, fingerprint, status, headers, body, created_at, expires_at)
   values ($1, $2, $3, $4, $5, $6, now(), now() + $7 * interval '1 millisecond')`,
);

/** The live record of a key, after its insert found one. */
const FIND = prepared(
  'idempotency_find',
  `select json_build_object('fingerprint', fingerprint, 'status', status, 'headers', headers, 'body', body) as stored
   from idempotency_keys where api_key_id = $1 and key = $2 and expires_at > now()`,
);

/** What a record answers a request with: its outcome, if the request is the one it recorded. */
function replayOf(stored: Stored, scope: IdempotencyScope): RecordedOutcome {
  if (stored.fingerprint !== scope.fingerprint && stored.fingerprint !== scope.earlierFingerprint) {
    throw new IdempotencyKeyReusedError(
      'This Idempotency-Key was used for a different request (another operation, path or body, or another user token); use a new key for a new request.',
    );
  }
  return { status: stored.status, headers: stored.headers, body: stored.body };
}

const inUse = () =>
  new IdempotencyKeyInFlightError('A request with this Idempotency-Key is still being processed; retry after it has been answered.');

/** PostgreSQL's error code, on the error or its causes. */
function codeOf(error: unknown): unknown {
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    if ('code' in cause) return cause.code;
  }
  return undefined;
}

/** The outcome of `record`: kept with the write, or a record another request committed first. */
export type Recorded = { committed: true } | { committed: false; replay: RecordedOutcome };

/** Why a claim was refused: a record to answer with, or an error (the key is in use, or recorded for another request). */
type RefusedClaim = { replay: RecordedOutcome } | { error: IdempotencyKeyInFlightError | IdempotencyKeyReusedError };

/** The write's transaction, as MikroORM holds one: a Kysely transaction on one pooled connection. */
type Transaction = Pick<ControlledTransaction<unknown>, 'executeQuery' | 'commit' | 'rollback'>;

/**
 * A write under an idempotency key: its transaction is open until `record` or `abandon`.
 *
 * The key's claim opens the transaction, in one message with the write's first statement: the write
 * runs as if the key were free, and a refused claim stops that message before the statement runs.
 * The statement then fails with the refusal (and so does every statement after it, unsent), the
 * operation's answer is discarded, and `refusal` says what to answer instead. A write that ran no
 * statement sends its claim with its record.
 *
 * The transaction is the database's alone: a write of one statement (a creation) runs it through
 * `statements`, and only a write that needs a unit of work (`em`, an update) gets one, made on first
 * use inside the transaction. MikroORM's own transaction would fork, begin, flush and commit a unit
 * of work for every keyed write, which cost more than the key's statements.
 */
export class IdempotentWrite {
  /** What forks and plain statements come from: the ORM's entity manager. */
  readonly #base: EntityManager;
  readonly #scope: IdempotencyScope;
  #transaction: Transaction | undefined;
  #em: EntityManager | undefined;
  #unsettled = true;
  /** How a statement that carried the claim found the key, when it was not free. */
  #claimRefused: 'in-use' | 'recorded' | undefined;
  /** Statements in the write's transaction. */
  readonly statements: StatementRunner = { getKysely: () => this.#open() };

  private constructor(base: EntityManager, scope: IdempotencyScope) {
    this.#base = base;
    this.#scope = scope;
  }

  /** Opens the write's transaction, its claim of the key held back to go with the first statement. */
  static async begin(base: EntityManager, scope: IdempotencyScope): Promise<IdempotentWrite> {
    const write = new IdempotentWrite(base, scope);
    await write.#begin();
    return write;
  }

  /** The write's unit of work, in its transaction: made on first use. */
  get em(): EntityManager {
    if (!this.#em) {
      this.#em = this.#base.fork();
      this.#em.setTransactionContext(this.#open());
    }
    return this.#em;
  }

  #open(): Transaction {
    if (!this.#transaction) throw new Error('the idempotent write has no open transaction');
    return this.#transaction;
  }

  /** Begins the transaction, the claim held back with its BEGIN (no message yet). */
  async #begin(): Promise<void> {
    // BEGIN is answered at once: it waits for the first statement (db/transaction-edges.ts).
    this.#transaction = await this.#base.getKysely().startTransaction().execute();
    this.#em?.setTransactionContext(this.#transaction);
    try {
      const { apiKeyId, key } = this.#scope;
      const refused = (error: unknown) => {
        const code = codeOf(error);
        if (code === REFUSED_CLAIM.inUse) this.#claimRefused = 'in-use';
        if (code === REFUSED_CLAIM.recorded) this.#claimRefused = 'recorded';
        return code === REFUSED_CLAIM.inUse || code === REFUSED_CLAIM.recorded;
      };
      await runPlainText(this.statements, riderText({ text: CLAIM, values: [apiKeyId, key], refused }));
    } catch (error) {
      await this.#rollBack();
      throw error;
    }
  }

  /**
   * Ends a transaction that keeps nothing. A rollback fails only when its connection is gone, and
   * then PostgreSQL has rolled the transaction back already (the pool drops that connection); the
   * request's answer, whatever it is, does not depend on it. What the unit of work holds was not
   * written, so a later flush must not try it again.
   */
  async #rollBack(): Promise<void> {
    const transaction = this.#detach();
    this.#em?.clear();
    await transaction
      ?.rollback()
      .execute()
      .catch(() => undefined);
  }

  /** Takes the transaction off the write and its unit of work, for its caller to end. */
  #detach(): Transaction | undefined {
    const transaction = this.#transaction;
    this.#transaction = undefined;
    this.#em?.resetTransactionContext();
    return transaction;
  }

  /** Whether a statement carried the claim and it was refused; the transaction is then of no use. */
  get claimRefused(): boolean {
    return this.#claimRefused !== undefined;
  }

  /**
   * Ends a write whose claim was refused: rolls it back and answers with the key's record (which
   * the claim found live) or the refusal.
   */
  async refusal(): Promise<RefusedClaim> {
    this.#unsettled = false;
    await this.#rollBack();
    if (this.#claimRefused === 'recorded') {
      const [row] = await runPrepared<{ stored: Stored | null }>(this.#base, FIND, [this.#scope.apiKeyId, this.#scope.key]);
      try {
        // Gone since (expired and purged): a retry will find the key free.
        if (row?.stored) return { replay: replayOf(row.stored, this.#scope) };
      } catch (error) {
        if (error instanceof IdempotencyKeyReusedError) return { error };
        throw error;
      }
    }
    return { error: inUse() };
  }

  /**
   * Records the outcome and commits it with the write, or answers with the claim's refusal.
   * `wroteNothing`: the outcome reports that nothing was done (a refusal).
   *
   * Should a record of the key have been committed since the claim looked (the claim looks once it
   * holds the lock, so only a writer that never took the lock could), it makes this one's insert
   * fail, and this request's write is rolled back and answered with that record instead.
   */
  async record(outcome: RecordedOutcome, ttlMs: number, wroteNothing: boolean): Promise<Recorded> {
    this.#unsettled = false;
    // An outcome that reports nothing done keeps nothing of what ran: a document whose second
    // mutation was refused keeps nothing of its first (nor could it, when the refusal was the
    // database's and aborted the transaction). The outcome is recorded on its own, under a new
    // claim. (Without a savepoint before every write, which would cost each one a subtransaction.)
    if (wroteNothing && !this.claimRefused) {
      await this.#rollBack();
      await this.#begin();
    }
    return await this.#settle(outcome, ttlMs);
  }

  /** Inserts the record and commits with it; or rolls back, for the claim's refusal or another's record. */
  async #settle(outcome: RecordedOutcome, ttlMs: number): Promise<Recorded> {
    const { apiKeyId, key, fingerprint } = this.#scope;
    const { status, headers, body } = outcome;
    if (!this.claimRefused) {
      try {
        // Changes still in the unit of work join the transaction before it ends in the statement below.
        await this.#em?.flush();
        await runPlainText(
          this.statements,
          `${execute(RECORD, [apiKeyId, key, fingerprint, status, JSON.stringify(headers), body, ttlMs])}; commit`,
        );
        // The statement committed; this gives the connection back, with no round trip
        // (db/transaction-edges.ts).
        await this.#detach()?.commit().execute();
        return { committed: true };
      } catch (error) {
        // Unless the claim went with the record and was refused:
        if (!this.claimRefused) {
          await this.#rollBack();
          if (violatedConstraint(error) !== 'idempotency_keys_pkey') throw error;
          const [row] = await runPrepared<{ stored: Stored | null }>(this.#base, FIND, [apiKeyId, key]);
          if (!row?.stored) throw new Error('an idempotency record conflicted, then could not be read', { cause: error });
          return { committed: false, replay: replayOf(row.stored, this.#scope) };
        }
      }
    }
    const refusal = await this.refusal();
    if ('error' in refusal) throw refusal.error;
    return { committed: false, replay: refusal.replay };
  }

  /** Rolls the write back and frees the key: the outcome is not one to keep (a failure of ours). */
  async abandon(): Promise<void> {
    if (!this.#unsettled) return;
    this.#unsettled = false;
    await this.#rollBack();
  }
}

/**
 * Deletes expired records, a bounded batch per statement, until none is left or `maxBatches` ran;
 * returns how many went.
 */
export async function purgeExpiredIdempotencyKeys(em: EntityManager, maxBatches = 100): Promise<number> {
  let deleted = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    const rows = await em.execute<{ n: number }[]>(
      `with gone as (
         delete from idempotency_keys where ctid in (select ctid from idempotency_keys where expires_at <= now() limit ?)
         returning 1)
       select count(*)::int as n from gone`,
      [PURGE_BATCH],
    );
    const n = rows[0]?.n ?? 0;
    deleted += n;
    if (n < PURGE_BATCH) break;
  }
  return deleted;
}
