// API keys: issuing, listing, rotating and revoking them (api-key-verifier.ts checks presented ones).
import { disableEndpointsOfRevokedKey } from './webhook-endpoints.ts';
import { ApiKey } from '../db/entities/index.ts';
import { newId } from '../db/ids.ts';
import { NOTIFY_SQL } from '../db/notifications.ts';
import type { EntityManager } from '../db/orm.ts';
import { RATE_LIMIT_MAX } from '../config.ts';
import { ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import { generateKeySecret, hashKeySecret, type KeyEnvironment } from './api-key-secrets.ts';
import { normalizeCidr } from '../net/cidr.ts';
import { InputCheck, requireId } from './validation.ts';
import { isOneOf } from '../guards.ts';

/**
 * Channel on which instances hear that keys changed: a new key's prefix (so it verifies everywhere
 * at once), or a changed key's id (so cached verifications are dropped at once).
 */
export const API_KEYS_CHANNEL = 'api_keys_changed';

/** What a key may do; `admin` is a trusted back-office client. */
export const SCOPES = ['users:read', 'users:write', 'orders:read', 'orders:write', 'webhooks:manage', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

export interface KeySettings {
  name: string;
  scopes: readonly string[];
  allowedCidrs?: readonly string[];
  expiresAt?: Date | null;
  rateLimitPerMinute?: number | null;
}

/** A new key and its secret: the only moment the secret exists outside the caller's hands. */
export interface IssuedKey {
  key: ApiKey;
  secret: string;
}

function checkSettings(input: KeySettings): KeySettings {
  const check = new InputCheck();
  // Shown in the operators' list, one key a line: no control characters.
  const name = check.text('name', input.name);
  if (name !== undefined && (name.length < 1 || name.length > 100)) check.fail('name', 'must be 1 to 100 characters');
  const scopes = [...new Set(input.scopes.map((scope) => scope.trim()))];
  if (scopes.length === 0) check.fail('scopes', `must name at least one of ${SCOPES.join(', ')}`);
  for (const scope of scopes) if (!isOneOf(SCOPES, scope)) check.fail('scopes', `"${scope}" is not one of ${SCOPES.join(', ')}`);
  const allowedCidrs: string[] = [];
  for (const cidr of input.allowedCidrs ?? []) {
    const normalized = normalizeCidr(cidr);
    if (normalized) allowedCidrs.push(normalized);
    else check.fail('allowedCidrs', `"${cidr}" is not an IPv4 or IPv6 CIDR`);
  }
  if (input.expiresAt && input.expiresAt.getTime() <= Date.now()) check.fail('expiresAt', 'must be in the future');
  const limit = input.rateLimitPerMinute;
  if (limit != null && !(Number.isInteger(limit) && limit >= 1 && limit <= RATE_LIMIT_MAX)) {
    check.fail('rateLimitPerMinute', `must be a whole number from 1 to ${RATE_LIMIT_MAX}`);
  }
  check.done();
  return { ...input, name: name!, scopes, allowedCidrs };
}

export async function createApiKey(em: EntityManager, pepper: string, environment: KeyEnvironment, input: KeySettings): Promise<IssuedKey> {
  const settings = checkSettings(input);
  const { secret, prefix } = generateKeySecret(environment);
  return em.transactional(async (tx) => {
    const id = newId('apiKey');
    const key = tx.create(ApiKey, {
      id,
      lineageId: id,
      name: settings.name,
      prefix,
      secretHash: hashKeySecret(secret, pepper),
      environment,
      scopes: [...settings.scopes],
      allowedCidrs: [...(settings.allowedCidrs ?? [])],
      expiresAt: settings.expiresAt ?? null,
      rateLimitPerMinute: settings.rateLimitPerMinute ?? null,
    });
    await tx.flush();
    await tx.execute(NOTIFY_SQL, [API_KEYS_CHANNEL, prefix]);
    return { key, secret };
  });
}

/**
 * On a development instance with no keys at all, one key with every scope, so a new user gets from
 * install to a first answer; undefined once any key exists.
 */
export async function createFirstDevelopmentKey(em: EntityManager, pepper: string): Promise<IssuedKey | undefined> {
  if ((await em.count(ApiKey, {})) > 0) return undefined;
  return createApiKey(em, pepper, 'test', { name: 'First development key', scopes: SCOPES });
}

export async function listApiKeys(em: EntityManager): Promise<ApiKey[]> {
  return em.find(ApiKey, {}, { orderBy: { id: 'asc' } });
}

async function mustFind(em: EntityManager, id: string): Promise<ApiKey> {
  const key = await em.findOne(ApiKey, { id: requireId('apiKey', 'id', id) });
  if (!key) throw new NotFoundError(`No API key has the id ${id}.`);
  return key;
}

/** Revokes the key at once, and disables its endpoints if no key of its lineage is left; revoking a revoked key changes nothing. */
export async function revokeApiKey(em: EntityManager, id: string): Promise<ApiKey> {
  return em.transactional(async (tx) => {
    const key = await mustFind(tx, id);
    key.revokedAt ??= new Date();
    // Written before the endpoints' statement reads whether the lineage has a key left.
    await tx.flush();
    await disableEndpointsOfRevokedKey(tx, key.lineageId, key.revokedAt);
    await tx.execute(NOTIFY_SQL, [API_KEYS_CHANNEL, key.id]);
    return key;
  });
}

/** Longest an old key keeps working beside its successor. */
export const ROTATION_GRACE_MAX_MS = 30 * 86_400_000;

/**
 * Issues a successor with the same settings, expiring `expiresInMs` from now (by default after the
 * lifetime the old key was given, or never); the old key keeps working for `graceMs` (never longer
 * than it would have anyway), so clients can switch without downtime. A key is rotated once: a key
 * already replaced is refused, naming its successor.
 */
export async function rotateApiKey(
  em: EntityManager,
  pepper: string,
  id: string,
  graceMs: number,
  expiresInMs?: number,
): Promise<IssuedKey & { previous: ApiKey }> {
  if (!(graceMs >= 0 && graceMs <= ROTATION_GRACE_MAX_MS)) {
    throw ValidationError.field('graceMs', `must be at most ${ROTATION_GRACE_MAX_MS / 86_400_000}d: the old key is to go, not to stay`);
  }
  return em.transactional(async (tx) => {
    const previous = await mustFind(tx, id);
    const now = Date.now();
    if (previous.revokedAt || (previous.expiresAt && previous.expiresAt.getTime() <= now)) {
      throw new ConflictError(`API key ${id} is revoked or expired; create a new key instead.`);
    }
    // A second rotation would make a second successor, living only as long as the first one's grace.
    const successor = await tx.findOne(ApiKey, { rotatedFromId: previous.id, revokedAt: null }, { fields: ['id'] });
    if (successor) throw new ConflictError(`API key ${id} was already rotated to ${successor.id}; rotate that key instead.`);
    // The new key lives as long as the old one was given to, from now, unless told otherwise: a
    // rotation is how a key that is about to expire is renewed.
    const lifetimeMs = expiresInMs ?? (previous.expiresAt ? previous.expiresAt.getTime() - previous.createdAt.getTime() : undefined);
    const { secret, prefix } = generateKeySecret(previous.environment);
    const key = tx.create(ApiKey, {
      name: previous.name,
      prefix,
      secretHash: hashKeySecret(secret, pepper),
      environment: previous.environment,
      scopes: [...previous.scopes],
      allowedCidrs: [...previous.allowedCidrs],
      expiresAt: lifetimeMs === undefined ? null : new Date(now + lifetimeMs),
      rateLimitPerMinute: previous.rateLimitPerMinute,
      rotatedFromId: previous.id,
      lineageId: previous.lineageId,
    });
    const graceEnd = new Date(now + graceMs);
    if (!previous.expiresAt || previous.expiresAt > graceEnd) previous.expiresAt = graceEnd;
    await tx.execute(NOTIFY_SQL, [API_KEYS_CHANNEL, previous.id]);
    await tx.execute(NOTIFY_SQL, [API_KEYS_CHANNEL, prefix]);
    return { key, secret, previous };
  });
}
