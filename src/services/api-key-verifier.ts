// Verifying presented API keys quickly and without letting strangers cost database work. Keys are
// found by their public prefix, so the verifier keeps the set of prefixes that exist: a key whose
// prefix is not in it (a guess, a typo, a flood of random keys) is refused from memory. The set is
// loaded at start and kept current by the key-change notifications (a new key's prefix arrives
// the moment it commits), reloaded whenever that channel reconnects, and topped up from the
// database every cache period in case a notification was lost. Rows of real keys are cached by
// prefix for the cache period; invalid keys never enter the cache, so they cannot evict valid ones,
// and a wrong secret for a known prefix is refused from the cached hash.
import { timingSafeEqual } from 'node:crypto';
import { ApiKey } from '../db/entities/index.ts';
import type { EntityManager } from '../db/orm.ts';
import { networkMatcher } from '../net/cidr.ts';
import { isKeyPrefix, keySecretMatches, prefixOf } from './api-key-secrets.ts';

/** What a verified key lets its caller do; no secret material. */
export interface VerifiedKey {
  id: string;
  /** The first key of its rotation chain: what the key owns belongs to the chain. */
  lineageId: string;
  prefix: string;
  name: string;
  scopes: readonly string[];
  allowedCidrs: readonly string[];
  rateLimitPerMinute: number | null;
  expiresAt: Date | null;
  /** Whether a request from this address may use the key (its CIDR allowlist; empty allows all). */
  allowsAddress(address: string): boolean;
}

export interface VerifierOptions {
  /** How long a key's row is reused; also the bound on how late a revocation or a new key takes effect when notifications fail. */
  ttlMs: number;
  /** Rows cached at most (least recently used go first). */
  maxEntries: number;
}

interface CachedRow {
  secretHash: string;
  /** Undefined for a revoked key: its prefix exists, nothing verifies against it. */
  key: VerifiedKey | undefined;
  /** The secret once it has verified against the hash. */
  verifiedSecret?: Buffer;
  until: number;
}

/** Prefixes created since the last top-up are read with this much overlap, for clock skew and late commits. */
const TOP_UP_OVERLAP_MS = 60_000;

export class ApiKeyVerifier {
  readonly #em: () => EntityManager;
  readonly #pepper: string;
  readonly #options: VerifierOptions;
  readonly #rows = new Map<string, CachedRow>();
  /** Prefixes of keys that exist; undefined until loaded (every prefix is then looked up). */
  #prefixes: Set<string> | undefined;
  /**
   * One set per reload under way: the prefixes heard of while it reads. Its read may predate them
   * (a key committed after the read began), and the set it builds replaces the one they were added to.
   */
  readonly #reloads = new Set<Set<string>>();
  /**
   * Counts the changes heard of that empty the row cache. A row read while one arrived may predate
   * it (a key revoked after the read), so it answers the request that read it but is not kept.
   */
  #changes = 0;
  #toppedUpAt = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(em: () => EntityManager, pepper: string, options: VerifierOptions) {
    this.#em = em;
    this.#pepper = pepper;
    this.#options = options;
  }

  /** Loads the prefixes of every key, then tops them up every cache period (without a cache, on notifications alone). */
  async start(): Promise<void> {
    await this.reload();
    if (this.#options.ttlMs <= 0) return;
    this.#timer = setInterval(() => void this.topUp().catch(() => undefined), Math.max(this.#options.ttlMs, 1000));
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /**
   * The key `secret` is, if it is a valid one. Answered at once (no promise) from memory when it
   * can be: an unknown prefix, or a key whose row is cached.
   */
  verify(secret: string, now = Date.now()): VerifiedKey | undefined | Promise<VerifiedKey | undefined> {
    const prefix = prefixOf(secret);
    if (!prefix || (this.#prefixes && !this.#prefixes.has(prefix))) return undefined;
    const row = this.#rows.get(prefix);
    if (row && row.until > now) {
      // Most recently used last, so eviction takes the least recently used.
      this.#rows.delete(prefix);
      this.#rows.set(prefix, row);
      return this.#check(row, secret, now);
    }
    return this.#load(prefix, now).then((loaded) => (loaded ? this.#check(loaded, secret, now) : undefined));
  }

  #check(row: CachedRow, secret: string, now: number): VerifiedKey | undefined {
    if (!row.key) return undefined;
    // A secret that verified once is compared as it is (constant time), sparing the HMAC on every request.
    const presented = Buffer.from(secret);
    const known =
      row.verifiedSecret !== undefined && row.verifiedSecret.length === presented.length && timingSafeEqual(row.verifiedSecret, presented);
    if (!known) {
      if (!keySecretMatches(secret, row.secretHash, this.#pepper)) return undefined;
      row.verifiedSecret = presented;
    }
    return row.key.expiresAt === null || row.key.expiresAt.getTime() > now ? row.key : undefined;
  }

  /**
   * What a key-change notification says: a new key's prefix (it verifies from now on), a changed
   * key's id, or '' after the channel reconnected (anything may have changed).
   */
  keysChanged(payload: string): void {
    if (isKeyPrefix(payload)) {
      this.#exists(payload);
      return;
    }
    this.#rows.clear();
    this.#changes++;
    if (payload === '') void this.reload().catch(() => undefined);
  }

  /** Reads the prefix of every key that can still verify. */
  async reload(): Promise<void> {
    const startedAt = Date.now();
    const heard = new Set<string>();
    this.#reloads.add(heard);
    try {
      const rows = await this.#em().execute<{ prefix: string }[]>('select prefix from api_keys where revoked_at is null');
      this.#prefixes = new Set([...rows.map((row) => row.prefix), ...heard]);
      this.#toppedUpAt = startedAt;
    } finally {
      this.#reloads.delete(heard);
    }
  }

  /** Notes that a key with `prefix` exists, in the set in use and in those reloads are building. */
  #exists(prefix: string): void {
    this.#prefixes?.add(prefix);
    for (const heard of this.#reloads) heard.add(prefix);
  }

  /** Adds the prefixes of keys created lately (a safety net for lost notifications). */
  async topUp(): Promise<void> {
    if (!this.#prefixes) return this.reload();
    const startedAt = Date.now();
    const since = new Date(this.#toppedUpAt - TOP_UP_OVERLAP_MS);
    const rows = await this.#em().execute<{ prefix: string }[]>('select prefix from api_keys where created_at >= ?', [since]);
    for (const { prefix } of rows) this.#exists(prefix);
    this.#toppedUpAt = startedAt;
  }

  async #load(prefix: string, now: number): Promise<CachedRow | undefined> {
    const changes = this.#changes;
    const found = await this.#em().findOne(ApiKey, { prefix });
    if (!found) return undefined;
    const row: CachedRow = {
      secretHash: found.secretHash,
      key: found.revokedAt
        ? undefined
        : {
            id: found.id,
            lineageId: found.lineageId,
            prefix: found.prefix,
            name: found.name,
            scopes: found.scopes,
            allowedCidrs: found.allowedCidrs,
            rateLimitPerMinute: found.rateLimitPerMinute ?? null,
            expiresAt: found.expiresAt ?? null,
            allowsAddress: found.allowedCidrs.length > 0 ? networkMatcher(found.allowedCidrs) : () => true,
          },
      until: now + this.#options.ttlMs,
    };
    this.#exists(prefix);
    if (changes !== this.#changes) return row;
    if (this.#rows.size >= this.#options.maxEntries) this.#rows.delete(this.#rows.keys().next().value!);
    this.#rows.set(prefix, row);
    return row;
  }
}
